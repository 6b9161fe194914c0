package generatedmc

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kind is a generator's kind of object (KubeletConfig, ContainerRuntimeConfig) as choosing its
// pools and names sees it: the names it gives, and where an object says which pools it
// selects. T is the API type and P its pointer, so a list of T is read without copying.
type Kind[T any, P interface {
	*T
	metav1.Object
}] struct {
	Names Names
	// PoolSelector is an object's spec.machineConfigPoolSelector.
	PoolSelector func(P) *metav1.LabelSelector
}

// PoolsFor returns the pools o selects, in the given order. A nil selector, or one without
// terms, selects none (empty says so, for the caller's message); err is the selector's own.
func (k Kind[T, P]) PoolsFor(o P, pools []mcfgv1.MachineConfigPool) (selected []*mcfgv1.MachineConfigPool, empty bool, err error) {
	sel, err := PoolSelector(k.PoolSelector(o))
	if err != nil {
		return nil, false, err
	}
	return SelectedPools(sel, pools), sel == nil, nil
}

// ManagedName picks the MachineConfig name self owns on pool as OpenShift does (Pick), against
// the other objects of all that select pool. all may or may not hold self (a cache may not have
// it yet); mcExists says whether a MachineConfig of that name exists. The errors are Pick's.
func (k Kind[T, P]) ManagedName(pool *mcfgv1.MachineConfigPool, self P, all []T, mcExists func(string) bool) (string, error) {
	var others []Claimant
	for i := range all {
		if other := P(&all[i]); other.GetName() != self.GetName() && Selects(k.PoolSelector(other), pool) {
			others = append(others, ClaimantOf(other))
		}
	}
	return k.Names.Pick(pool.Name, ClaimantOf(self), others, mcExists)
}
