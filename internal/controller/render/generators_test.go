package render

import (
	"context"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/testenv"
)

func TestPendingGenerators(t *testing.T) {
	pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker", Labels: map[string]string{"pools/worker": ""}}}
	worker := &metav1.LabelSelector{MatchLabels: map[string]string{"pools/worker": ""}}
	master := &metav1.LabelSelector{MatchLabels: map[string]string{"pools/master": ""}}
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "pools/worker", Operator: "Bogus"}}}
	cases := []struct {
		name string
		gens []generator
		want []string
	}{
		{"none", nil, nil},
		{"processed", []generator{{Kind: "KubeletConfig", Name: "a", Generation: 2, ObservedGeneration: 2, PoolSelector: worker}}, nil},
		{"lagging", []generator{{Kind: "KubeletConfig", Name: "a", Generation: 2, ObservedGeneration: 1, PoolSelector: worker}}, []string{"a"}},
		{"never processed", []generator{{Kind: "ContainerRuntimeConfig", Name: "c", Generation: 1, PoolSelector: worker}}, []string{"c"}},
		{"other pool", []generator{{Kind: "KubeletConfig", Name: "a", Generation: 2, PoolSelector: master}}, nil},
		{"nil selector selects nothing", []generator{{Kind: "KubeletConfig", Name: "a", Generation: 2}}, nil},
		{"empty selector selects nothing", []generator{{Kind: "KubeletConfig", Name: "a", Generation: 2, PoolSelector: &metav1.LabelSelector{}}}, nil},
		{"malformed selector selects nothing", []generator{{Kind: "KubeletConfig", Name: "a", Generation: 2, PoolSelector: bad}}, nil},
		{"being deleted", []generator{{Kind: "KubeletConfig", Name: "a", Generation: 1, ObservedGeneration: 1, PoolSelector: worker, Deleting: true}}, []string{"a"}},
		{"sorted by kind then name", []generator{
			{Kind: "KubeletConfig", Name: "b", Generation: 1, PoolSelector: worker},
			{Kind: "KubeletConfig", Name: "a", Generation: 1, PoolSelector: worker},
			{Kind: "ContainerRuntimeConfig", Name: "z", Generation: 1, PoolSelector: worker},
		}, []string{"z", "a", "b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, g := range pendingGenerators(pool, tc.gens) {
				got = append(got, g.Name)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestGeneratorClockBoundsTheWait(t *testing.T) {
	var c generatorClock
	t0 := time.Unix(1000, 0)
	a := generator{UID: types.UID("a"), Generation: 1}
	b := generator{UID: types.UID("b"), Generation: 1}
	if c.overdue("worker", []generator{a}, t0) {
		t.Fatal("overdue when first seen")
	}
	if c.overdue("worker", []generator{a}, t0.Add(generatorWaitLimit-time.Second)) {
		t.Fatal("overdue before the limit")
	}
	// Another pool's clock is its own.
	if c.overdue("infra", []generator{a}, t0.Add(generatorWaitLimit)) {
		t.Fatal("infra overdue on worker's wait")
	}
	// b arrives late: a pool waiting on both is held until b too is overdue.
	if c.overdue("worker", []generator{a, b}, t0.Add(generatorWaitLimit)) {
		t.Fatal("overdue while b has just started waiting")
	}
	if !c.overdue("worker", []generator{a}, t0.Add(generatorWaitLimit)) {
		t.Fatal("a alone should be overdue at the limit")
	}
	// b no longer held worker in the last call, so its wait starts over.
	if c.overdue("worker", []generator{a, b}, t0.Add(2*generatorWaitLimit)) {
		t.Fatal("b's wait survived a reconcile it did not hold")
	}
	if !c.overdue("worker", []generator{a, b}, t0.Add(3*generatorWaitLimit)) {
		t.Fatal("both overdue")
	}
	// A new generation of a starts a new wait.
	if c.overdue("worker", []generator{{UID: types.UID("a"), Generation: 2}}, t0.Add(3*generatorWaitLimit)) {
		t.Fatal("a new generation inherited the old wait")
	}
	if c.overdue("worker", nil, t0) {
		t.Fatal("nothing pending is never overdue")
	}
	if _, kept := c.first["worker"]; kept {
		t.Fatal("a pool nothing holds is still remembered")
	}
}

// A pool is not rendered while a KubeletConfig selecting it is unprocessed, and renders as soon
// as its status says it caught up. (No KubeletConfig controller runs here: the test plays it.)
func TestRenderWaitsForGenerators(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const role = "gated"
	if err := k8sClient.Create(ctx, fileMC(role, "00-gated-base", "/etc/base", "base")); err != nil {
		t.Fatal(err)
	}
	pool := newPool(t, ctx, role)
	pool.Labels = map[string]string{"pools/gated": ""}
	if err := k8sClient.Update(ctx, pool); err != nil {
		t.Fatal(err)
	}
	first := waitFor(t, ctx, role, "first render", targetIsNot("")).Spec.Configuration.Name

	kc := &mcfgv1.KubeletConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "gated-kubelet"},
		Spec:       mcfgv1.KubeletConfigSpec{MachineConfigPoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pools/gated": ""}}},
	}
	if err := k8sClient.Create(ctx, kc); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Create(ctx, fileMC(role, "50-gated-extra", "/etc/extra", "x")); err != nil {
		t.Fatal(err)
	}
	// Held: the new MachineConfig is not rendered while the KubeletConfig is unprocessed.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		var p mcfgv1.MachineConfigPool
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: role}, &p); err != nil {
			t.Fatal(err)
		}
		if p.Spec.Configuration.Name != first {
			t.Fatalf("pool rendered %s while KubeletConfig %s was unprocessed", p.Spec.Configuration.Name, kc.Name)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The generator catches up: the pool renders.
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: kc.Name}, kc); err != nil {
		t.Fatal(err)
	}
	kc.Status.ObservedGeneration = kc.Generation
	if err := k8sClient.Status().Update(ctx, kc); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, role, "render once the KubeletConfig was processed", targetIsNot(first))
	if err := k8sClient.Delete(ctx, kc); err != nil {
		t.Fatal(err)
	}
}
