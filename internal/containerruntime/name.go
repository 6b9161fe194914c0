package containerruntime

import (
	"fmt"
	"strconv"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/protocol"
)

// names: 99-<pool>-generated-containerruntime, then -1 to -9.
const names = generatedmc.ContainerRuntimeNames

// GeneratedName is the MachineConfig name for pool and suffix ("" for none).
func GeneratedName(pool, suffix string) string { return names.Of(pool, suffix) }

// PoolsFor returns the pools cfg's machineConfigPoolSelector matches, in the given order. A nil
// or empty selector matches none (never every pool).
func PoolsFor(cfg *mcfgv1.ContainerRuntimeConfig, pools []mcfgv1.MachineConfigPool) ([]*mcfgv1.MachineConfigPool, error) {
	sel, err := poolSelector(cfg)
	if err != nil {
		return nil, err
	}
	var out []*mcfgv1.MachineConfigPool
	for i := range pools {
		if sel != nil && sel.Matches(labels.Set(pools[i].Labels)) {
			out = append(out, &pools[i])
		}
	}
	return out, nil
}

func poolSelector(cfg *mcfgv1.ContainerRuntimeConfig) (labels.Selector, error) {
	sel, err := metav1.LabelSelectorAsSelector(cfg.Spec.MachineConfigPoolSelector)
	if err != nil {
		return nil, &Error{Object: cfg.Name, Problems: []FieldError{{Field: "spec.machineConfigPoolSelector", Reason: err.Error()}}}
	}
	if sel.Empty() {
		return nil, nil
	}
	return sel, nil
}

func selects(cfg *mcfgv1.ContainerRuntimeConfig, pool *mcfgv1.MachineConfigPool) bool {
	sel, err := poolSelector(cfg)
	return err == nil && sel != nil && sel.Matches(labels.Set(pool.Labels))
}

// ManagedName returns the MachineConfig cfg owns on pool, as OpenShift chooses it: the suffix
// cfg's annotation records; else no suffix for the only ContainerRuntimeConfig on the pool; else,
// for one created before a newer one that never got the annotation (made by an old controller),
// the MachineConfig its finalizers name; else one past the largest suffix any config on the pool
// has. all is every ContainerRuntimeConfig; mcExists tells whether a MachineConfig exists.
func ManagedName(pool *mcfgv1.MachineConfigPool, cfg *mcfgv1.ContainerRuntimeConfig, all []mcfgv1.ContainerRuntimeConfig, mcExists func(string) bool) (string, error) {
	if suffix, ok := cfg.Annotations[protocol.NameSuffixAnnotation]; ok {
		return GeneratedName(pool.Name, suffix), nil
	}
	var onPool []*mcfgv1.ContainerRuntimeConfig
	for i := range all {
		if selects(&all[i], pool) {
			onPool = append(onPool, &all[i])
		}
	}
	if len(onPool) <= 1 {
		return GeneratedName(pool.Name, ""), nil
	}
	if !newest(cfg, onPool) {
		if name, ok := names.NewestFinalizer(pool.Name, cfg.Finalizers, mcExists); ok {
			return name, nil
		}
	}
	largest := 0
	for _, c := range onPool {
		v := c.Annotations[protocol.NameSuffixAnnotation]
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return "", fmt.Errorf("ContainerRuntimeConfig %s: metadata.annotations[%s]: %q is not a number", c.Name, protocol.NameSuffixAnnotation, v)
		}
		largest = max(largest, n)
	}
	if largest+1 > generatedmc.MaxNameSuffix {
		return "", &Error{Object: cfg.Name, Problems: []FieldError{{Field: "spec.machineConfigPoolSelector",
			Reason: fmt.Sprintf("pool %s already has the most ContainerRuntimeConfigs it can take (10); delete an old one first", pool.Name)}}}
	}
	return GeneratedName(pool.Name, strconv.Itoa(largest+1)), nil
}

// newest reports whether no other config on the pool was created after cfg.
func newest(cfg *mcfgv1.ContainerRuntimeConfig, onPool []*mcfgv1.ContainerRuntimeConfig) bool {
	for _, c := range onPool {
		if c.CreationTimestamp.After(cfg.CreationTimestamp.Time) {
			return false
		}
	}
	return true
}

// SuffixToRecord returns the annotation value to record for name on a config that has none.
func SuffixToRecord(pool, name string) string {
	suffix, _ := names.SuffixOf(pool, name)
	return suffix
}
