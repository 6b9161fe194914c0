package generatedmc

import (
	"strconv"
	"strings"
)

// MaxNameSuffix: suffixes run 1 to 9, so at most 10 objects of one kind share a pool.
const MaxNameSuffix = 9

// Names are the MachineConfig names a generator gives the objects of its kind on a pool, as
// OpenShift names them: 99-<pool>-generated-<Names>, then -1 to -MaxNameSuffix for the further
// objects selecting that pool (each records its suffix in protocol.NameSuffixAnnotation). The
// 99- prefix sorts them after every base MachineConfig, and a later suffix after an earlier one,
// so the newest object wins the render's merge.
type Names string

const (
	KubeletNames          Names = "kubelet"
	ContainerRuntimeNames Names = "containerruntime"
)

// Of is the name for pool and suffix ("" for none).
func (n Names) Of(pool, suffix string) string {
	name := "99-" + pool + "-generated-" + string(n)
	if suffix == "" {
		return name
	}
	return name + "-" + suffix
}

// SuffixOf returns the suffix of name if it is one of pool's names: none, or a number from 1
// written without leading zeros (the only ones Of is given).
func (n Names) SuffixOf(pool, name string) (suffix string, ok bool) {
	base := n.Of(pool, "")
	if name == base {
		return "", true
	}
	rest, found := strings.CutPrefix(name, base+"-")
	if !found {
		return "", false
	}
	if v, err := strconv.Atoi(rest); err != nil || v < 1 || strconv.Itoa(v) != rest {
		return "", false
	}
	return rest, true
}

// IsName reports whether name is one of some pool's names, as the finalizers an object carries
// for its MachineConfigs are.
func (n Names) IsName(name string) bool {
	rest, ok := strings.CutPrefix(name, "99-")
	i := strings.LastIndex(rest, "-generated-"+string(n))
	if !ok || i <= 0 {
		return false
	}
	_, ok = n.SuffixOf(rest[:i], name)
	return ok
}

// NewestFinalizer returns, among finalizers, pool's name with the largest suffix whose
// MachineConfig exists: the one an object that predates the suffix annotation was writing.
func (n Names) NewestFinalizer(pool string, finalizers []string, exists func(string) bool) (string, bool) {
	best, bestN := "", -1
	for _, f := range finalizers {
		suffix, ok := n.SuffixOf(pool, f)
		if !ok || !exists(f) {
			continue
		}
		v := 0
		if suffix != "" {
			v, _ = strconv.Atoi(suffix)
		}
		if v > bestN {
			best, bestN = f, v
		}
	}
	return best, bestN >= 0
}
