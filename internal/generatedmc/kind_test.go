package generatedmc

import (
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/protocol"
)

// ManagedName counts as others only the objects selecting the pool, never self (all may or may
// not hold it); both generators' own tests cover the names and messages they make of it.
func TestKindManagedNameAndPools(t *testing.T) {
	kind := Kind[mcfgv1.KubeletConfig, *mcfgv1.KubeletConfig]{Names: KubeletNames,
		PoolSelector: func(kc *mcfgv1.KubeletConfig) *metav1.LabelSelector { return kc.Spec.MachineConfigPoolSelector }}
	worker := &metav1.LabelSelector{MatchLabels: map[string]string{"pools.operator.machineconfiguration.openshift.io/worker": ""}}
	kc := func(name string, minute int, suffix string, sel *metav1.LabelSelector) mcfgv1.KubeletConfig {
		o := mcfgv1.KubeletConfig{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(int64(minute)*60, 0))},
			Spec: mcfgv1.KubeletConfigSpec{MachineConfigPoolSelector: sel}}
		if suffix != "" {
			o.Annotations = map[string]string{protocol.NameSuffixAnnotation: suffix}
		}
		return o
	}
	pools := []mcfgv1.MachineConfigPool{
		{ObjectMeta: metav1.ObjectMeta{Name: "master", Labels: map[string]string{"pools.operator.machineconfiguration.openshift.io/master": ""}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "worker", Labels: worker.MatchLabels}},
	}
	self := kc("c", 2, "", worker)
	all := []mcfgv1.KubeletConfig{kc("a", 0, "3", worker), kc("elsewhere", 1, "7", nil), self}
	got, err := kind.ManagedName(&pools[1], &self, all, func(string) bool { return false })
	if err != nil || got != "99-worker-generated-kubelet-4" {
		t.Errorf("ManagedName = %q, %v; want one past a's suffix, the other pool's ignored", got, err)
	}
	if got, _ := kind.ManagedName(&pools[1], &self, all[1:], func(string) bool { return false }); got != "99-worker-generated-kubelet" {
		t.Errorf("alone on the pool (self in all): %q", got)
	}
	selected, empty, err := kind.PoolsFor(&self, pools)
	if err != nil || empty || len(selected) != 1 || selected[0].Name != "worker" {
		t.Errorf("PoolsFor = %v, %v, %v; want worker", selected, empty, err)
	}
	none := kc("none", 0, "", &metav1.LabelSelector{})
	if selected, empty, err := kind.PoolsFor(&none, pools); err != nil || !empty || len(selected) != 0 {
		t.Errorf("an empty selector: %v, %v, %v; want no pool, empty", selected, empty, err)
	}
}
