package kubeletconfig

import (
	"strconv"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mco-dev/mco/internal/protocol"
)

// maxNameSuffix caps a pool at 10 KubeletConfigs: -1 to -9 after the unsuffixed one.
const maxNameSuffix = 9

// GeneratedName is the MachineConfig name for suffix ("" or a number) on pool. The 99- prefix
// sorts it after every base MachineConfig, and a later suffix after an earlier one, so the
// newest KubeletConfig wins the render's merge.
func GeneratedName(pool, suffix string) string {
	name := "99-" + pool + "-generated-kubelet"
	if suffix != "" {
		name += "-" + suffix
	}
	return name
}

// suffixOf returns the suffix of a generated name of pool, and whether name is one.
func suffixOf(pool, name string) (string, bool) {
	base := GeneratedName(pool, "")
	if name == base {
		return "", true
	}
	rest, ok := strings.CutPrefix(name, base+"-")
	if !ok {
		return "", false
	}
	if _, err := strconv.Atoi(rest); err != nil {
		return "", false
	}
	return rest, true
}

// ManagedName picks the generated MachineConfig name of kc on pool as OpenShift does: the name
// its suffix annotation records; else the unsuffixed name when kc is the pool's only
// KubeletConfig; else, for a KubeletConfig that predates the annotation and is not the pool's
// newest, the newest generated MachineConfig its finalizers name; else one past the highest
// suffix any KubeletConfig of the pool records, at most 9. all is every KubeletConfig;
// mcExists says whether a MachineConfig of that name exists.
func ManagedName(pool *mcfgv1.MachineConfigPool, kc *mcfgv1.KubeletConfig, all []mcfgv1.KubeletConfig, mcExists func(string) bool) (string, error) {
	if suffix, ok := kc.Annotations[protocol.NameSuffixAnnotation]; ok {
		if suffix != "" {
			if n, err := strconv.Atoi(suffix); err != nil || n < 1 {
				return "", fieldError(kc.Name, "metadata.annotations["+protocol.NameSuffixAnnotation+"]", "%q is not a name suffix (empty or 1 to %d)", suffix, maxNameSuffix)
			}
		}
		return GeneratedName(pool.Name, suffix), nil
	}
	onPool := kubeletConfigsOf(pool, kc, all)
	if len(onPool) == 1 {
		return GeneratedName(pool.Name, ""), nil
	}
	if !newest(kc, onPool) {
		if name, ok := newestFinalizer(pool.Name, kc, mcExists); ok {
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
	if highest+1 > maxNameSuffix {
		return "", fieldError(kc.Name, "spec.machineConfigPoolSelector",
			"pool %s already has the most KubeletConfigs it can (%d: %s to -%d); delete old ones before adding another",
			pool.Name, maxNameSuffix+1, GeneratedName(pool.Name, ""), maxNameSuffix)
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

// newestFinalizer: the generated name of pool with the highest suffix among kc's finalizers
// whose MachineConfig exists.
func newestFinalizer(pool string, kc *mcfgv1.KubeletConfig, mcExists func(string) bool) (string, bool) {
	best, bestN := "", -1
	for _, f := range kc.Finalizers {
		suffix, ok := suffixOf(pool, f)
		if !ok || !mcExists(f) {
			continue
		}
		n := 0
		if suffix != "" {
			n, _ = strconv.Atoi(suffix)
		}
		if n > bestN {
			best, bestN = f, n
		}
	}
	return best, bestN >= 0
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
	suffix, _ := suffixOf(pool, name)
	return suffix
}

// IsGeneratedName reports whether name is a generated name of some pool, as the finalizers a
// KubeletConfig carries are.
func IsGeneratedName(name string) bool {
	rest, ok := strings.CutPrefix(name, "99-")
	if !ok {
		return false
	}
	i := strings.LastIndex(rest, "-generated-kubelet")
	if i <= 0 {
		return false
	}
	_, ok = suffixOf(rest[:i], name)
	return ok
}
