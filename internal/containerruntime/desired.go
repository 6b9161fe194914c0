package containerruntime

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/protocol"
)

// Cluster is what a ContainerRuntimeConfig's MachineConfigs depend on besides itself.
type Cluster struct {
	Pools []mcfgv1.MachineConfigPool
	// Configs are all ContainerRuntimeConfigs (for the name suffixes).
	Configs           []mcfgv1.ContainerRuntimeConfig
	MachineConfigs    []*mcfgv1.MachineConfig
	ControllerVersion string
}

// Desired is what one ContainerRuntimeConfig should have.
type Desired struct {
	// Suffix is the protocol.NameSuffixAnnotation value to record, when cfg has none yet.
	Suffix *string
	// MachineConfigs are one per pool it selects, in pool order.
	MachineConfigs []*mcfgv1.MachineConfig
}

// DesiredFor returns cfg's MachineConfigs, or an error naming what the admin must fix: an
// invalid field, a selector matching no pool, a pool without a free name, a base storage.conf
// that cannot be read. Either every pool's MachineConfig is returned or none.
func DesiredFor(cfg *mcfgv1.ContainerRuntimeConfig, c Cluster) (*Desired, error) {
	if err := Validate(cfg); err != nil {
		return nil, err
	}
	pools, err := PoolsFor(cfg, c.Pools)
	if err != nil {
		return nil, err
	}
	if len(pools) == 0 {
		return nil, &Error{Object: cfg.Name, Problems: []FieldError{{Field: "spec.machineConfigPoolSelector", Reason: "matches no MachineConfigPool"}}}
	}
	exists := map[string]bool{}
	for _, mc := range c.MachineConfigs {
		exists[mc.Name] = true
	}
	d := &Desired{}
	_, annotated := cfg.Annotations[protocol.NameSuffixAnnotation]
	for _, pool := range pools {
		name, err := ManagedName(pool, cfg, c.Configs, func(n string) bool { return exists[n] })
		if err != nil {
			return nil, err
		}
		if !annotated && d.Suffix == nil {
			s := SuffixToRecord(pool.Name, name)
			d.Suffix = &s
		}
		var base = defaultBase()
		if needsStorageConf(cfg.Spec.ContainerRuntimeConfig) {
			if base, err = FindStorageBase(pool, c.MachineConfigs); err != nil {
				return nil, &Error{Object: cfg.Name, Problems: []FieldError{{Field: "spec.containerRuntimeConfig.overlaySize", Reason: "pool " + pool.Name + ": base storage.conf: " + err.Error()}}}
			}
		}
		mc, err := Generate(Input{Pool: pool, Config: cfg, Name: name, StorageBase: base, ControllerVersion: c.ControllerVersion})
		if err != nil {
			return nil, err
		}
		d.MachineConfigs = append(d.MachineConfigs, mc)
	}
	return d, nil
}

// IsGeneratedName reports whether name has the form of a ContainerRuntimeConfig's MachineConfig
// (of any pool): the finalizers a ContainerRuntimeConfig carries for them look like this.
func IsGeneratedName(name string) bool { return names.IsName(name) }
