package changeplan

import (
	"slices"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/protocol"
)

// A node whose drain is blocked is noted with its spec.drain step (here: no policy, it waits);
// a plan without a reading time notes nothing of the kind.
func TestLiveNotesBlockedDrains(t *testing.T) {
	c, rendered := liveCluster(t)
	w2 := c.Nodes[2].DeepCopy()
	w2.Spec.Unschedulable = true
	w2.Annotations[protocol.DesiredDrainAnnotation] = protocol.DrainRequest(rendered["worker"])
	w2.Annotations[protocol.DrainBlockedSinceAnnotation] = "2026-11-29T07:00:00Z"
	c.Nodes[2] = w2
	c.Now = time.Date(2026, 11, 29, 7, 1, 0, 0, time.UTC)
	notes := func(c Cluster) []string {
		r, err := Live(c, Applied{MachineConfigs: []*mcfgv1.MachineConfig{}}, "worker")
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range r.Pools[0].Groups {
			for _, n := range g.Nodes {
				if n.Name == "worker-2" {
					return n.Notes
				}
			}
		}
		t.Fatal("worker-2 is in no group")
		return nil
	}
	want := "drain: drain blocked for 1m0s; waiting (no spec.drain"
	if got := notes(c); !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, want) }) {
		t.Errorf("worker-2 notes %q, want one starting %q", got, want)
	}
	c.Now = time.Time{}
	if got := notes(c); slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "drain:") }) {
		t.Errorf("without a reading time: %q", got)
	}
}
