package generatedmc

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/protocol"
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
	// RegistriesNames: one cluster-wide input per pool, so never a suffix.
	RegistriesNames Names = "registries"
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

// newestFinalizer returns, among finalizers, pool's name with the largest suffix whose
// MachineConfig exists: the one an object that predates the suffix annotation was writing.
func (n Names) newestFinalizer(pool string, finalizers []string, exists func(string) bool) (string, bool) {
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

// Claimant is an object of a generator's kind (a KubeletConfig, a ContainerRuntimeConfig) as
// the naming sees it.
type Claimant struct {
	Name string
	// Suffix is its protocol.NameSuffixAnnotation; nil when it has none.
	Suffix     *string
	Created    time.Time
	Finalizers []string
}

// BadSuffixError: Object's suffix annotation records Suffix, which no name of Of parses back to
// (a number with leading zeros, 0, text); pruning and finalizing could not tell such a name as
// the object's.
type BadSuffixError struct {
	Object, Suffix string
}

func (e *BadSuffixError) Error() string {
	return fmt.Sprintf("%s: %q is not a name suffix (empty or 1 to %d)", e.Object, e.Suffix, MaxNameSuffix)
}

// ErrNoNameLeft: the pool's objects already record the largest suffix, MaxNameSuffix.
var ErrNoNameLeft = errors.New("no generated MachineConfig name left on the pool")

// Pick returns the MachineConfig name self owns on pool, as OpenShift picks it: the name its
// suffix annotation records; else the unsuffixed name when no other object selects pool; else,
// for one that predates the annotation and is not the pool's newest, the newest generated
// MachineConfig its finalizers name (exists says whether a MachineConfig does); else one past
// the largest suffix any object of the pool records. others are the other objects selecting
// pool. The errors are *BadSuffixError and ErrNoNameLeft.
func (n Names) Pick(pool string, self Claimant, others []Claimant, exists func(string) bool) (string, error) {
	if self.Suffix != nil {
		name := n.Of(pool, *self.Suffix)
		if _, ok := n.SuffixOf(pool, name); !ok {
			return "", &BadSuffixError{Object: self.Name, Suffix: *self.Suffix}
		}
		return name, nil
	}
	if len(others) == 0 {
		return n.Of(pool, ""), nil
	}
	newest := !slices.ContainsFunc(others, func(o Claimant) bool { return o.Created.After(self.Created) })
	if !newest {
		if name, ok := n.newestFinalizer(pool, self.Finalizers, exists); ok {
			return name, nil
		}
	}
	largest := 0
	for _, o := range others {
		if o.Suffix == nil || *o.Suffix == "" {
			continue
		}
		v, err := strconv.Atoi(*o.Suffix)
		if err != nil {
			return "", &BadSuffixError{Object: o.Name, Suffix: *o.Suffix}
		}
		largest = max(largest, v)
	}
	if largest+1 > MaxNameSuffix {
		return "", ErrNoNameLeft
	}
	return n.Of(pool, strconv.Itoa(largest+1)), nil
}

// ClaimantOf is o as Pick sees it.
func ClaimantOf(o metav1.Object) Claimant {
	c := Claimant{Name: o.GetName(), Created: o.GetCreationTimestamp().Time, Finalizers: o.GetFinalizers()}
	if s, ok := o.GetAnnotations()[protocol.NameSuffixAnnotation]; ok {
		c.Suffix = &s
	}
	return c
}
