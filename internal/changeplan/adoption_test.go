package changeplan

import (
	"slices"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/adoption"
	"github.com/mco-dev/mco/internal/protocol"
)

// A live plan shows the pool's nodes waiting for adoption with their agents' plans, a node
// being adopted in a group of its own (no rendered config to plan from), and counts an approved
// adoption that drains or reboots in the exit code.
func TestLiveAdoptions(t *testing.T) {
	c, rendered := liveCluster(t)
	workerLabels := map[string]string{protocol.WorkerRoleLabel: ""}
	target := rendered["worker"]
	plan := adoption.Plan{Target: target, Actions: "Reboot", Drain: true, Reboot: true,
		Files: []adoption.FileChange{{Path: "/etc/chrony.conf", Change: adoption.ChangeContent, Diff: "-pool x\n+pool a.example.org"}}}
	encoded, err := adoption.Encode(plan)
	if err != nil {
		t.Fatal(err)
	}
	pending := func(name string, extra ...string) *corev1.Node {
		n := node(name, "", "", workerLabels, append([]string{protocol.AdoptionTargetAnnotation, target, protocol.AdoptionAnnotation, protocol.AdoptionPending,
			protocol.AdoptionPlanAnnotation, encoded}, extra...)...)
		delete(n.Annotations, protocol.CurrentConfigAnnotation)
		delete(n.Annotations, protocol.DesiredConfigAnnotation)
		delete(n.Annotations, protocol.StateAnnotation)
		return n
	}
	adopting := node("k-adopting", "", target, workerLabels, protocol.StateAnnotation, string(protocol.NodeWorking))
	delete(adopting.Annotations, protocol.CurrentConfigAnnotation)
	c.Nodes = append(c.Nodes, pending("k-waiting"), pending("k-approved", protocol.AdoptAnnotation, protocol.AdoptApproved), adopting)
	// Only the approved adoption's reboot counts: drop the other nodes' reasons for exit 1.
	c.Nodes = slices.DeleteFunc(c.Nodes, func(n *corev1.Node) bool { return n.Name == "worker-1" || n.Name == "worker-2" })

	r, err := Live(c, Applied{}, "worker")
	if err != nil {
		t.Fatal(err)
	}
	w := r.Pools[0]
	if len(w.Adoptions) != 2 || w.Adoptions[0].Node != "k-approved" || !w.Adoptions[0].Approved || w.Adoptions[1].Node != "k-waiting" || w.Adoptions[1].Approved {
		t.Fatalf("adoptions %+v, want k-approved (approved) and k-waiting", w.Adoptions)
	}
	if got := w.Adoptions[1].Plan; got.Files[0].Diff != plan.Files[0].Diff || !got.Reboot || w.Adoptions[1].Note != "" {
		t.Errorf("k-waiting's plan %+v (note %q), want the agent's, whole, and no note (the pool's config is unchanged)", got, w.Adoptions[1].Note)
	}
	var group *NodeGroup
	for i := range w.Groups {
		if w.Groups[i].Current == "" {
			group = &w.Groups[i]
		}
	}
	if group == nil || !group.Adopting || group.Error != "" || !slices.Equal(nodeNames(*group), []string{"k-adopting"}) ||
		!strings.Contains(strings.Join(group.Nodes[0].Notes, " "), "being adopted") {
		t.Fatalf("groups %+v, want k-adopting alone in an adopting group without error", w.Groups)
	}
	if r.ExitCode() != 1 || !strings.Contains(r.Why(), "pool worker: k-approved, approved for adoption, would be rebooted") || strings.Contains(r.Why(), "k-waiting") {
		t.Errorf("exit %d (%s), want 1 for k-approved only", r.ExitCode(), r.Why())
	}

	t.Run("a change to the pool's config: each node compares again", func(t *testing.T) {
		r, err := Live(c, Applied{MachineConfigs: []*mcfgv1.MachineConfig{mc(t, "50-worker-chrony", files(file("/etc/chrony.conf", "pool b.example.org\n")))}}, "worker")
		if err != nil {
			t.Fatal(err)
		}
		a := r.Pools[0].Adoptions[0]
		if !strings.Contains(a.Note, "this plan is for "+target+"; once the pool targets "+r.Pools[0].Rendered+" the node is offered it") || !strings.Contains(a.Note, "the approval stands") {
			t.Errorf("note %q", a.Note)
		}
	})
}
