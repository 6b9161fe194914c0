package kubeletconfig

import (
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

// noBaseSource is what the search reports when no MachineConfig writes KubeletConfPath.
const noBaseSource = "no MachineConfig"

// Base is the kubelet configuration a KubeletConfig is merged over, and where it came from.
// Config nil means the pool has none: no MachineConfig writes KubeletConfPath, so the pool is
// not OpenShift-templated and its nodes' kubelet configuration is the host's own (kubeadm's
// /var/lib/kubelet/config.yaml, say); a KubeletConfig then becomes a drop-in (dropin.go).
type Base struct {
	// Source is the MachineConfig that provided it.
	Source string
	Config *kubeletv1beta1.KubeletConfiguration
}

// FindBase returns pool's base kubelet configuration: KubeletConfPath as the pool's render
// would leave it without any KubeletConfig, i.e. from the last MachineConfig in merge order
// that writes it, leaving out every generated kubelet MachineConfig (IsGenerated: ours would
// otherwise become its own base and compound on each sync). Other generated MachineConfigs may
// be the base: on OpenShift it is 98-<pool>-generated-kubelet (the template's kubelet.conf with
// the cluster's feature gates), else 01-<role>-kubelet. When no MachineConfig writes it, a Base
// without Config. parse reads a MachineConfig's Ignition; every selected MachineConfig is
// read, so one the pool cannot render is an error here too.
func FindBase(pool *mcfgv1.MachineConfigPool, all []*mcfgv1.MachineConfig, parse func(*mcfgv1.MachineConfig) (ignition.Config, error)) (Base, error) {
	selected, err := render.Select(pool, all)
	if err != nil {
		return Base{}, err
	}
	found, err := generatedmc.BaseSearch{Path: KubeletConfPath, DefaultSource: noBaseSource,
		NotABase: IsGenerated, Parse: parse}.In(selected)
	if err != nil {
		return Base{}, err
	}
	if found.Source == noBaseSource {
		return Base{}, nil
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
