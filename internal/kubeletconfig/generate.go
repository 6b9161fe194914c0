package kubeletconfig

import (
	"fmt"
	"slices"
	"strings"

	"github.com/imdario/mergo"
	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/kubeletfiles"
)

// Files a KubeletConfig's MachineConfig writes besides KubeletConfPath on an OpenShift-templated
// pool; both only do something with OpenShift's kubelet.service.
const (
	// LogLevelDropInPath sets KUBELET_LOG_LEVEL, which OpenShift's kubelet.service passes as -v.
	LogLevelDropInPath = "/etc/systemd/system/kubelet.service.d/20-logging.conf"
	// NodeSizingEnvPath tells OpenShift's kubelet-auto-node-size.service whether to compute
	// system-reserved from the node's capacity, and what to reserve otherwise.
	NodeSizingEnvPath = "/etc/node-sizing-enabled.env"
)

// enforceNodeAllocatable values the merge looks at (k8s.io/kubernetes/pkg/kubelet/types).
const (
	enforcePods                       = "pods"
	enforceSystemReserved             = "system-reserved"
	enforceSystemReservedCompressible = "system-reserved-compressible"
)

// KubeletConfigKind is the owner kind on generated MachineConfigs.
var KubeletConfigKind = mcfgv1.GroupVersion.WithKind("KubeletConfig")

// ClusterTLS is the TLS profile of apiservers.config.openshift.io `cluster` on clusters that
// serve that API; Profile nil (no object, or no profile) means Intermediate.
type ClusterTLS struct {
	Profile *configv1.TLSSecurityProfile
}

// Input is everything one generated MachineConfig depends on.
type Input struct {
	Pool          *mcfgv1.MachineConfigPool
	KubeletConfig *mcfgv1.KubeletConfig
	// Name comes from ManagedName.
	Name string
	Base Base
	// ClusterTLS, where the config.openshift.io API is served, replaces the base's TLS settings
	// as OpenShift's template does; nil keeps them (vanilla Kubernetes). Not used without a
	// base: the host's kubelet keeps its own TLS settings.
	ClusterTLS        *ClusterTLS
	ControllerVersion string
}

// Generate returns the MachineConfig for in. With a base (an OpenShift-templated pool) its
// spec.config is byte for byte what OpenShift generates for the same KubeletConfig and base;
// without one it writes only the drop-in kubeletfiles.DropInPath (see dropIn). Either way it has OpenShift's
// name, role label and owner.
func Generate(in Input) (*mcfgv1.MachineConfig, error) {
	files, err := filesFor(in)
	if err != nil {
		return nil, err
	}
	raw, err := generatedmc.Ignition(files)
	if err != nil {
		return nil, fmt.Errorf("encoding the Ignition config of %s: %w", in.Name, err)
	}
	owner := *metav1.NewControllerRef(in.KubeletConfig, KubeletConfigKind)
	return generatedmc.MachineConfig(in.Pool.Name, in.Name, raw, []metav1.OwnerReference{owner}, in.ControllerVersion), nil
}

func filesFor(in Input) ([]generatedmc.File, error) {
	kc := in.KubeletConfig
	if in.Base.Config == nil {
		data, err := dropIn(kc)
		if err != nil {
			return nil, err
		}
		return []generatedmc.File{{Path: kubeletfiles.DropInPath, Data: data}}, nil
	}
	cfg := in.Base.Config.DeepCopy()
	if in.ClusterTLS != nil {
		setTLS(cfg, ProfileSettings(in.ClusterTLS.Profile))
	}
	if kc.Spec.TLSSecurityProfile != nil {
		setTLS(cfg, ProfileSettings(kc.Spec.TLSSecurityProfile))
	}
	reserved, err := mergeUserConfig(cfg, kc, in.Base.Source)
	if err != nil {
		return nil, err
	}
	conf, err := encode(cfg)
	if err != nil {
		return nil, err
	}
	// In OpenShift's order; a nil one is not written.
	sizing, logLevel := nodeSizingEnv(kc.Spec.AutoSizingReserved, reserved), []byte(nil)
	if l := kc.Spec.LogLevel; l != nil {
		logLevel = fmt.Appendf(nil, "[Service]\nEnvironment=\"KUBELET_LOG_LEVEL=%d\"\n", *l)
	}
	return []generatedmc.File{
		{Path: NodeSizingEnvPath, Data: sizing},
		{Path: LogLevelDropInPath, Data: logLevel},
		{Path: KubeletConfPath, Data: conf},
	}, nil
}

func setTLS(cfg *kubeletv1beta1.KubeletConfiguration, s TLSSettings) {
	cfg.TLSMinVersion, cfg.TLSCipherSuites = s.MinVersion, s.CipherSuites
}

// mergeUserConfig merges spec.kubeletConfig over cfg as OpenShift does and returns the
// system-reserved resources it took out for the node sizing file.
//
// mergo (WithOverride) replaces only with non-empty values, so OpenShift special-cases what an
// admin can only say with an empty one: protectKernelDefaults false (found in the raw JSON),
// and systemReservedCgroup "" (implied by an enforceNodeAllocatable without system-reserved).
// systemReserved cpu, memory and ephemeral-storage go to the node sizing file instead of
// kubelet.conf; featureGates are the cluster's, never the KubeletConfig's.
func mergeUserConfig(cfg *kubeletv1beta1.KubeletConfiguration, kc *mcfgv1.KubeletConfig, baseSource string) (map[string]string, error) {
	reserved := map[string]string{}
	user, err := userConfig(kc)
	if err != nil {
		return nil, err
	}
	if user != nil {
		for _, r := range []string{"memory", "cpu", "ephemeral-storage"} {
			if v, ok := user.SystemReserved[r]; ok {
				reserved[r] = v
				delete(user.SystemReserved, r)
			}
		}
		user.FeatureGates = nil
		if strings.Contains(string(kc.Spec.KubeletConfig.Raw), `"protectKernelDefaults":false`) {
			cfg.ProtectKernelDefaults = false
		}
		if err := mergo.Merge(cfg, user, mergo.WithOverride); err != nil {
			return nil, fieldError(kc.Name, kubeletConfigField, "cannot be merged over %s: %v", baseSource, err)
		}
		if user.SystemReservedCgroup == "" && len(user.EnforceNodeAllocatable) > 0 && !slices.ContainsFunc(user.EnforceNodeAllocatable, enforcesSystemReserved) {
			cfg.SystemReservedCgroup = ""
		}
	}
	if cfg.ReservedSystemCPUs != "" {
		// CPUs reserved by number replace the system-reserved cgroup's enforcement; pods stays.
		cfg.SystemReservedCgroup = ""
		enforce := slices.DeleteFunc(slices.Clone(cfg.EnforceNodeAllocatable), enforcesSystemReserved)
		if !slices.Contains(enforce, enforcePods) {
			enforce = append([]string{enforcePods}, enforce...)
		}
		cfg.EnforceNodeAllocatable = enforce
	}
	if cfg.SystemReservedCgroup != "" && cfg.SystemCgroups != "" && cfg.SystemReservedCgroup != cfg.SystemCgroups {
		return nil, fieldError(kc.Name, kubeletConfigField, "merged over %s, systemReservedCgroup (%s) must match systemCgroups (%s)",
			baseSource, cfg.SystemReservedCgroup, cfg.SystemCgroups)
	}
	return reserved, nil
}

func enforcesSystemReserved(v string) bool {
	return v == enforceSystemReserved || v == enforceSystemReservedCompressible
}

// nodeSizingEnv is the node sizing file: auto-sizing as the KubeletConfig says, unless it
// reserves resources itself (then auto-sizing is off and its values, or the defaults for
// those it leaves empty, are used). nil when the KubeletConfig says neither.
func nodeSizingEnv(auto *bool, reserved map[string]string) []byte {
	enabled := "false"
	switch {
	case len(reserved) > 0:
	case auto != nil:
		if *auto {
			enabled = "true"
		}
	default:
		return nil
	}
	value := func(r, def string) string {
		if v := reserved[r]; v != "" {
			return v
		}
		return def
	}
	return fmt.Appendf(nil, "NODE_SIZING_ENABLED=%s\nSYSTEM_RESERVED_MEMORY=%s\nSYSTEM_RESERVED_CPU=%s\nSYSTEM_RESERVED_ES=%s\n",
		enabled, value("memory", "1Gi"), value("cpu", "500m"), value("ephemeral-storage", "1Gi"))
}
