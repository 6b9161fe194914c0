package kubeletconfig

import (
	_ "embed"
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/render"
)

// KubeletConfPath is where the kubelet reads its configuration on OpenShift nodes (kubelet
// --config), and the file a KubeletConfig's MachineConfig replaces.
const KubeletConfPath = "/etc/kubernetes/kubelet.conf"

// DefaultBaseSource names the built-in default in messages and status.
const DefaultBaseSource = "the built-in default kubelet configuration"

// defaultKubeletConf is the base for a pool none of whose MachineConfigs provides
// KubeletConfPath: a vanilla Kubernetes kubelet as kubeadm configures one (see
// docs/generated-configs.md).
//
//go:embed default-kubelet.conf.yaml
var defaultKubeletConf []byte

// Base is the kubelet configuration a KubeletConfig is merged over, and where it came from.
type Base struct {
	// Source is the MachineConfig that provided it, or DefaultBaseSource.
	Source string
	Config *kubeletv1beta1.KubeletConfiguration
}

// FindBase returns pool's base kubelet configuration: KubeletConfPath as the pool's render
// would leave it without any KubeletConfig, i.e. from the last MachineConfig in merge order
// that writes it, leaving out every generated kubelet MachineConfig (IsGenerated: ours would
// otherwise become its own base and compound on each sync). Other generated MachineConfigs may
// be the base: on OpenShift it is 98-<pool>-generated-kubelet (the template's kubelet.conf with
// the cluster's feature gates), else 01-<role>-kubelet. When no MachineConfig writes it, the
// built-in default. parse reads a MachineConfig's Ignition; every selected MachineConfig is
// read, so one the pool cannot render is an error here too.
func FindBase(pool *mcfgv1.MachineConfigPool, all []*mcfgv1.MachineConfig, parse func(*mcfgv1.MachineConfig) (ignition.Config, error)) (Base, error) {
	selected, err := render.Select(pool, all)
	if err != nil {
		return Base{}, err
	}
	found, err := generatedmc.BaseSearch{Path: KubeletConfPath, Default: defaultKubeletConf, DefaultSource: DefaultBaseSource,
		NotABase: IsGenerated, Parse: parse}.In(selected)
	if err != nil {
		return Base{}, err
	}
	cfg, err := decode(found.Data)
	if err != nil {
		return Base{}, fmt.Errorf("%s: %s is not a KubeletConfiguration: %w", found.Source, KubeletConfPath, err)
	}
	return Base{Source: found.Source, Config: cfg}, nil
}

// IsGenerated reports whether mc is a KubeletConfig's MachineConfig: controlled by a
// KubeletConfig, or named like one (a generated name of the pool its role label names).
func IsGenerated(mc *mcfgv1.MachineConfig) bool {
	for _, ref := range mc.OwnerReferences {
		if ref.Kind == "KubeletConfig" && ref.Controller != nil && *ref.Controller {
			return true
		}
	}
	role := mc.Labels[protocol.RoleLabel]
	_, named := names.SuffixOf(role, mc.Name)
	return role != "" && named
}
