package changeplan

import (
	"slices"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/rollback"
)

// A pool held by a rollback is planned towards the config the hold points it at, not its render,
// and the plan says so; a change that renders anew plans the render and says the hold ends.
func TestLiveHeldByRollback(t *testing.T) {
	c, rendered := liveCluster(t)
	worker := c.Pools[0].DeepCopy()
	worker.Annotations = map[string]string{rolloutv1.RollbackAnnotation: rollback.Encode(rolloutv1.Rollback{
		From: rendered["worker"], To: rendered["worker-old"], By: rollback.ByUndo, Reason: "undone by an admin", At: "2026-11-29T07:00:00Z"})}
	c.Pools = []*mcfgv1.MachineConfigPool{worker, c.Pools[1]}

	r, err := Live(c, Applied{}, "worker")
	if err != nil {
		t.Fatal(err)
	}
	w := r.Pools[0]
	if w.Rendered != rendered["worker-old"] {
		t.Fatalf("rendered %s, want the held config %s", w.Rendered, rendered["worker-old"])
	}
	if !slices.ContainsFunc(w.Notes, func(n string) bool {
		return strings.HasPrefix(n, "rolled back: held on "+rendered["worker-old"]) && strings.Contains(n, rendered["worker"]+" was rolled back by mco rollout undo")
	}) {
		t.Errorf("notes %v do not say the pool is held", w.Notes)
	}
	for _, g := range w.Groups {
		want := "drain+reboot" // chrony.conf back to the old server
		if g.Current == rendered["worker-old"] {
			want = "none"
		}
		if g.Plan == nil || g.Plan.Rendered != rendered["worker-old"] || g.Plan.Disruption != want {
			t.Errorf("group %s: plan %+v, want %s to %s", g.Current, g.Plan, want, rendered["worker-old"])
		}
	}

	newChrony := mc(t, "50-worker-chrony", files(file("/etc/chrony.conf", "pool c.example.org\n")))
	r, err = Live(c, Applied{MachineConfigs: []*mcfgv1.MachineConfig{newChrony}}, "worker")
	if err != nil {
		t.Fatal(err)
	}
	w = r.Pools[0]
	if w.Rendered == rendered["worker-old"] || w.Rendered == rendered["worker"] {
		t.Errorf("rendered %s after a change, want the new render", w.Rendered)
	}
	if !slices.ContainsFunc(w.Notes, func(n string) bool {
		return strings.HasPrefix(n, "rolled back no more: the pool's MachineConfigs changed")
	}) {
		t.Errorf("notes %v do not say the change ends the hold", w.Notes)
	}
}
