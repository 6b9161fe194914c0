package render

import (
	"context"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
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
	steps := []struct {
		what    string
		pool    string
		pending []generator
		at      time.Duration
		want    time.Duration
	}{
		{"first seen: the whole limit", "worker", []generator{a}, 0, generatorWaitLimit},
		{"later: what is left", "worker", []generator{a}, generatorWaitLimit - time.Second, time.Second},
		{"another pool's clock is its own", "infra", []generator{a}, generatorWaitLimit, generatorWaitLimit},
		{"b arrives late: held until b too is overdue", "worker", []generator{a, b}, generatorWaitLimit, generatorWaitLimit},
		{"a alone is overdue at the limit", "worker", []generator{a}, generatorWaitLimit, 0},
		{"b's wait starts over after a reconcile it did not hold", "worker", []generator{a, b}, 2 * generatorWaitLimit, generatorWaitLimit},
		{"both overdue", "worker", []generator{a, b}, 3 * generatorWaitLimit, 0},
		{"a new generation starts a new wait", "worker", []generator{{UID: types.UID("a"), Generation: 2}}, 3 * generatorWaitLimit, generatorWaitLimit},
		{"nothing pending holds nothing", "worker", nil, 0, 0},
	}
	for _, s := range steps {
		if got := c.hold(s.pool, s.pending, t0.Add(s.at)); got != s.want {
			t.Fatalf("%s: hold %v, want %v", s.what, got, s.want)
		}
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
	// The controller writes the new pool too (its status): label it on the latest version.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
			return err
		}
		pool.Labels = map[string]string{"pools/gated": ""}
		return k8sClient.Update(ctx, pool)
	}); err != nil {
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
