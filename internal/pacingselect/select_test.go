package pacingselect

import (
	"errors"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

func policy(name string, sel *metav1.LabelSelector) rolloutv1.MachineConfigPoolRollout {
	return rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: rolloutv1.MachineConfigPoolRolloutSpec{PoolSelector: sel}}
}

func matchLabels(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

func TestFor(t *testing.T) {
	worker := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker", Labels: map[string]string{"pacing": "slow", "role": "worker"}}}
	inWorker := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "role", Operator: metav1.LabelSelectorOpIn, Values: []string{"worker", "infra"}}}}
	for _, tc := range []struct {
		name      string
		policies  []rolloutv1.MachineConfigPoolRollout
		want      string
		conflicts []string
	}{
		{name: "no policies"},
		{name: "matchLabels selects", policies: []rolloutv1.MachineConfigPoolRollout{policy("infra", matchLabels("role", "infra")), policy("slow", matchLabels("pacing", "slow"))}, want: "slow"},
		{name: "matchExpressions selects", policies: []rolloutv1.MachineConfigPoolRollout{policy("expr", inWorker)}, want: "expr"},
		{name: "a label the pool lacks", policies: []rolloutv1.MachineConfigPoolRollout{policy("both", matchLabels("pacing", "slow", "zone", "a"))}},
		{name: "no selector selects none", policies: []rolloutv1.MachineConfigPoolRollout{policy("nil", nil)}},
		{name: "empty selector selects every pool", policies: []rolloutv1.MachineConfigPoolRollout{policy("empty", &metav1.LabelSelector{}), policy("nil", nil)}, want: "empty"},
		{name: "invalid selector selects none", policies: []rolloutv1.MachineConfigPoolRollout{policy("bad", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "role", Operator: "Near"}}})}},
		{name: "two select", policies: []rolloutv1.MachineConfigPoolRollout{policy("zeta", matchLabels("role", "worker")), policy("infra", matchLabels("role", "infra")), policy("alpha", inWorker)},
			conflicts: []string{"alpha", "zeta"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := For(tc.policies, worker)
			var conflict *ConflictError
			switch {
			case tc.conflicts != nil:
				if !errors.As(err, &conflict) || len(conflict.Policies) != 2 || conflict.Policies[0] != tc.conflicts[0] || conflict.Policies[1] != tc.conflicts[1] {
					t.Fatalf("got %v, %v; want a conflict of %v", got, err, tc.conflicts)
				}
				const msg = "pool worker is selected by 2 MachineConfigPoolRollouts (mcprollout/alpha, mcprollout/zeta): no node of it starts until only one selects it"
				if err.Error() != msg {
					t.Errorf("error %q, want %q", err, msg)
				}
			case err != nil:
				t.Fatal(err)
			case tc.want == "" && got != nil:
				t.Fatalf("got mcprollout/%s, want none", got.Name)
			case tc.want != "" && (got == nil || got.Name != tc.want):
				t.Fatalf("got %v, want mcprollout/%s", got, tc.want)
			}
		})
	}
}

func TestPoolStatus(t *testing.T) {
	p := policy("workers", matchLabels("role", "worker"))
	p.Status.Pools = []rolloutv1.PoolRolloutStatus{{Name: "infra", Phase: rolloutv1.PhaseDone}, {Name: "worker", Phase: rolloutv1.PhaseSoaking}}
	if s, ok := PoolStatus(&p, "worker"); !ok || s.Phase != rolloutv1.PhaseSoaking {
		t.Errorf("worker: %+v, %v", s, ok)
	}
	if _, ok := PoolStatus(&p, "gpu"); ok {
		t.Error("gpu has no status entry")
	}
}
