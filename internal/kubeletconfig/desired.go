package kubeletconfig

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/ignition"
)

// Cluster is what a KubeletConfig's MachineConfigs depend on besides the KubeletConfig itself.
type Cluster struct {
	Pools          []mcfgv1.MachineConfigPool
	MachineConfigs []*mcfgv1.MachineConfig
	// KubeletConfigs are all of them, for the name suffixes.
	KubeletConfigs []mcfgv1.KubeletConfig
	// ClusterTLS: see Input.
	ClusterTLS        *ClusterTLS
	ControllerVersion string
	// Parse reads a MachineConfig's Ignition (the render controller's parse cache, say).
	Parse func(*mcfgv1.MachineConfig) (ignition.Config, error)
}

// Desired is the outcome of a KubeletConfig's sync.
type Desired struct {
	// MachineConfigs, one per selected pool, in pool order.
	MachineConfigs []*mcfgv1.MachineConfig
	// Suffix is the protocol.NameSuffixAnnotation value to record when the KubeletConfig has none yet.
	Suffix string
}

// DesiredFor returns kc's MachineConfigs, in the order OpenShift checks: the KubeletConfig on
// its own, the pools it selects, then per pool the static pod path, the name and the merge. Any
// error means none of them is to be written.
func DesiredFor(kc *mcfgv1.KubeletConfig, c Cluster) (*Desired, error) {
	if err := Validate(kc); err != nil {
		return nil, err
	}
	pools, err := PoolsFor(kc, c.Pools)
	if err != nil {
		return nil, err
	}
	exists := map[string]bool{}
	for _, mc := range c.MachineConfigs {
		exists[mc.Name] = true
	}
	out := &Desired{}
	for i, pool := range pools {
		if err := ValidateForPool(kc, pool); err != nil {
			return nil, err
		}
		name, err := ManagedName(pool, kc, c.KubeletConfigs, func(n string) bool { return exists[n] })
		if err != nil {
			return nil, err
		}
		if i == 0 {
			out.Suffix = SuffixFor(pool.Name, name)
		}
		base, err := FindBase(pool, c.MachineConfigs, c.Parse)
		if err != nil {
			return nil, fieldError(kc.Name, "spec.machineConfigPoolSelector", "pool %s: no usable base kubelet configuration: %v", pool.Name, err)
		}
		mc, err := Generate(Input{Pool: pool, KubeletConfig: kc, Name: name, Base: base, ClusterTLS: c.ClusterTLS, ControllerVersion: c.ControllerVersion})
		if err != nil {
			return nil, err
		}
		out.MachineConfigs = append(out.MachineConfigs, mc)
	}
	return out, nil
}
