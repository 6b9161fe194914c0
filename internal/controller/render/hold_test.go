package render

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/rollback"
	"github.com/mco-dev/mco/internal/testenv"
)

// GC keeps what an undo needs: the previous configuration and both ends of a rollback, even
// beyond the newest KeepRendered and with no pool or node pointing at them.
func TestGarbageKeepsWhatAnUndoNeeds(t *testing.T) {
	owned := []mcfgv1.MachineConfig{renderedAt("r1", 1), renderedAt("r2", 2), renderedAt("r3", 3), renderedAt("r4", 4), renderedAt("r5", 5)}
	pools := []mcfgv1.MachineConfigPool{{}}
	pools[0].Spec.Configuration.Name = "r5"
	pools[0].Status.Configuration.Name = "r5"
	pools[0].Annotations = map[string]string{rolloutv1.PreviousConfigurationAnnotation: "r2"}
	for _, tc := range []struct {
		name     string
		rollback string
		want     []string
	}{
		{name: "previous configuration", want: []string{"r4", "r3", "r1"}},
		{name: "and a rollback's ends", rollback: rollback.Encode(rolloutv1.Rollback{From: "r3", To: "r1"}), want: []string{"r4"}},
		{name: "not a rollback: only the previous configuration", rollback: "{", want: []string{"r4", "r3", "r1"}},
	} {
		p := pools[0].DeepCopy()
		if tc.rollback != "" {
			p.Annotations[rolloutv1.RollbackAnnotation] = tc.rollback
		}
		list := []mcfgv1.MachineConfigPool{*p}
		got := Garbage(owned, References(list, nil).Union(rollback.Needed(list)), 0)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: delete %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A rollback holds the pool on its To while its newest render is From, with the RolledBack
// condition; a To that is gone is refused without moving the pool; a new render ends the hold.
func TestRollbackHold(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const role = "holdback"
	mc := fileMC(role, "50-holdback", "/etc/holdback", "a")
	if err := k8sClient.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	newPool(t, ctx, role)
	a := waitFor(t, ctx, role, "first render", targetIsNot("")).Spec.Configuration.Name
	setContent(t, ctx, "50-holdback", role, "b")
	b := waitFor(t, ctx, role, "second render", targetIsNot(a)).Spec.Configuration.Name

	annotate(t, ctx, role, rollback.Encode(rolloutv1.Rollback{From: b, To: a, By: rollback.ByUndo, Reason: "undone by an admin", At: "2026-11-29T07:00:00Z"}))
	pool := waitFor(t, ctx, role, "held on "+a, func(p *mcfgv1.MachineConfigPool) bool {
		return p.Spec.Configuration.Name == a && poolcondition.IsTrue(&p.Status, poolcondition.RolledBack)
	})
	c := poolcondition.Get(&pool.Status, poolcondition.RolledBack)
	for _, want := range []string{"held on " + a, b + " was rolled back by mco rollout undo", "mco rollout resume mcp/" + role} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("RolledBack message %q lacks %q", c.Message, want)
		}
	}
	if poolcondition.IsTrue(&pool.Status, mcfgv1.MachineConfigPoolDegraded) {
		t.Error("a held pool is not Degraded")
	}

	// To gone: the hold is refused and the pool keeps its target.
	annotate(t, ctx, role, rollback.Encode(rolloutv1.Rollback{From: b, To: "rendered-holdback-gone", By: rollback.ByUndo, At: "2026-11-29T07:00:00Z"}))
	pool = waitFor(t, ctx, role, "refusal", func(p *mcfgv1.MachineConfigPool) bool {
		c := poolcondition.Get(&p.Status, poolcondition.RolledBack)
		return c != nil && c.Reason == rollback.ReasonTargetMissing
	})
	if pool.Spec.Configuration.Name != a {
		t.Errorf("target %s after a refused hold, want it kept at %s", pool.Spec.Configuration.Name, a)
	}
	if msg := poolcondition.Get(&pool.Status, poolcondition.RolledBack).Message; !strings.Contains(msg, "rendered-holdback-gone: it is not on the cluster") {
		t.Errorf("refusal %q does not name the missing config", msg)
	}

	// Back on the hold, then a new render (the MachineConfig changed) ends it.
	annotate(t, ctx, role, rollback.Encode(rolloutv1.Rollback{From: b, To: a, By: rollback.ByUndo, At: "2026-11-29T07:00:00Z"}))
	waitFor(t, ctx, role, "held again", func(p *mcfgv1.MachineConfigPool) bool {
		c := poolcondition.Get(&p.Status, poolcondition.RolledBack)
		return c != nil && c.Reason == rollback.ReasonHeld
	})
	setContent(t, ctx, "50-holdback", role, "c")
	pool = waitFor(t, ctx, role, "a new render ends the hold", func(p *mcfgv1.MachineConfigPool) bool {
		_, held := p.Annotations[rolloutv1.RollbackAnnotation]
		return !held && p.Spec.Configuration.Name != a && p.Spec.Configuration.Name != b && !poolcondition.IsTrue(&p.Status, poolcondition.RolledBack)
	})
	if c := poolcondition.Get(&pool.Status, poolcondition.RolledBack); c == nil || c.Status != corev1.ConditionFalse || c.Reason != rollback.ReasonNewRender {
		t.Errorf("RolledBack %+v after a new render, want False %s", c, rollback.ReasonNewRender)
	}
}

func setContent(t *testing.T, ctx context.Context, name, role, content string) {
	t.Helper()
	mc := &mcfgv1.MachineConfig{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		t.Fatal(err)
	}
	mc.Spec.Config = fileMC(role, "", "/etc/"+role, content).Spec.Config
	if err := k8sClient.Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
}

func annotate(t *testing.T, ctx context.Context, pool, value string) {
	t.Helper()
	p := &mcfgv1.MachineConfigPool{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: pool}, p); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(p.DeepCopy())
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[rolloutv1.RollbackAnnotation] = value
	if err := k8sClient.Patch(ctx, p, patch); err != nil {
		t.Fatal(err)
	}
}
