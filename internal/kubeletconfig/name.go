package kubeletconfig

import (
	"strconv"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/protocol"
)

// names: 99-<pool>-generated-kubelet, then -1 to -9.
const names = generatedmc.KubeletNames

// GeneratedName is the MachineConfig name for suffix ("" or a number) on pool.
func GeneratedName(pool, suffix string) string { return names.Of(pool, suffix) }

// ManagedName picks the generated MachineConfig name of kc on pool as OpenShift does: the name
// its suffix annotation records; else the unsuffixed name when kc is the pool's only
// KubeletConfig; else, for a KubeletConfig that predates the annotation and is not the pool's
// newest, the newest generated MachineConfig its finalizers name; else one past the highest
// suffix any KubeletConfig of the pool records, at most 9. all is every KubeletConfig;
// mcExists says whether a MachineConfig of that name exists.
func ManagedName(pool *mcfgv1.MachineConfigPool, kc *mcfgv1.KubeletConfig, all []mcfgv1.KubeletConfig, mcExists func(string) bool) (string, error) {
	if suffix, ok := kc.Annotations[protocol.NameSuffixAnnotation]; ok {
		// A suffix whose name does not parse back (0, 01) would name a MachineConfig that
		// pruning and finalizing could not tell as ours.
		name := GeneratedName(pool.Name, suffix)
		if _, ok := names.SuffixOf(pool.Name, name); !ok {
			return "", fieldError(kc.Name, "metadata.annotations["+protocol.NameSuffixAnnotation+"]", "%q is not a name suffix (empty or 1 to %d)", suffix, generatedmc.MaxNameSuffix)
		}
		return name, nil
	}
	onPool := kubeletConfigsOf(pool, kc, all)
	if len(onPool) == 1 {
		return GeneratedName(pool.Name, ""), nil
	}
	if !newest(kc, onPool) {
		if name, ok := names.NewestFinalizer(pool.Name, kc.Finalizers, mcExists); ok {
			return name, nil
		}
	}
	highest := 0
	for _, other := range onPool {
		suffix := other.Annotations[protocol.NameSuffixAnnotation]
		if suffix == "" {
			continue
		}
		n, err := strconv.Atoi(suffix)
		if err != nil {
			return "", fieldError(other.Name, "metadata.annotations["+protocol.NameSuffixAnnotation+"]", "%q is not a name suffix", suffix)
		}
		highest = max(highest, n)
	}
	if highest+1 > generatedmc.MaxNameSuffix {
		return "", fieldError(kc.Name, "spec.machineConfigPoolSelector",
			"pool %s already has the most KubeletConfigs it can (%d: %s to -%d); delete old ones before adding another",
			pool.Name, generatedmc.MaxNameSuffix+1, GeneratedName(pool.Name, ""), generatedmc.MaxNameSuffix)
	}
	return GeneratedName(pool.Name, strconv.Itoa(highest+1)), nil
}

// kubeletConfigsOf returns the KubeletConfigs in all whose selector matches pool, with kc
// among them even when all (a cache) does not have it yet.
func kubeletConfigsOf(pool *mcfgv1.MachineConfigPool, kc *mcfgv1.KubeletConfig, all []mcfgv1.KubeletConfig) []*mcfgv1.KubeletConfig {
	out := []*mcfgv1.KubeletConfig{kc}
	for i := range all {
		other := &all[i]
		if other.Name != kc.Name && selects(other, pool) {
			out = append(out, other)
		}
	}
	return out
}

func newest(kc *mcfgv1.KubeletConfig, onPool []*mcfgv1.KubeletConfig) bool {
	for _, other := range onPool {
		if other.CreationTimestamp.After(kc.CreationTimestamp.Time) {
			return false
		}
	}
	return true
}

// selects reports whether kc's machineConfigPoolSelector matches pool's labels. A nil or empty
// selector selects no pool, and an invalid one cannot select any.
func selects(kc *mcfgv1.KubeletConfig, pool *mcfgv1.MachineConfigPool) bool {
	sel, err := poolSelector(kc)
	return err == nil && sel != nil && sel.Matches(labels.Set(pool.Labels))
}

func poolSelector(kc *mcfgv1.KubeletConfig) (labels.Selector, error) {
	s := kc.Spec.MachineConfigPoolSelector
	if s == nil || (len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0) {
		return nil, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return nil, fieldError(kc.Name, "spec.machineConfigPoolSelector", "%v", err)
	}
	return sel, nil
}

// PoolsFor returns the pools kc applies to. None is an error: a KubeletConfig that changes
// nothing is a mistake the admin should see in its status.
func PoolsFor(kc *mcfgv1.KubeletConfig, pools []mcfgv1.MachineConfigPool) ([]*mcfgv1.MachineConfigPool, error) {
	sel, err := poolSelector(kc)
	if err != nil {
		return nil, err
	}
	var out []*mcfgv1.MachineConfigPool
	for i := range pools {
		if sel != nil && sel.Matches(labels.Set(pools[i].Labels)) {
			out = append(out, &pools[i])
		}
	}
	if len(out) == 0 {
		reason := "matches no MachineConfigPool"
		if sel == nil {
			reason = "is empty, so it selects no MachineConfigPool"
		}
		return nil, fieldError(kc.Name, "spec.machineConfigPoolSelector", "%s", reason)
	}
	return out, nil
}

// SuffixFor returns the protocol.NameSuffixAnnotation value that name (a generated name of pool) records.
func SuffixFor(pool, name string) string {
	suffix, _ := names.SuffixOf(pool, name)
	return suffix
}

// IsGeneratedName reports whether name is a generated name of some pool, as the finalizers a
// KubeletConfig carries are.
func IsGeneratedName(name string) bool { return names.IsName(name) }
