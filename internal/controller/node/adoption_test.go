package node

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"

	"github.com/mco-dev/mco/internal/adoption"
	"github.com/mco-dev/mco/internal/dev/nodesim"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/internal/testenv"
)

// createStranger creates a Ready node mco did not boot (a kubeadm node): no currentConfig,
// desiredConfig or state. The test plays its agent.
func createStranger(t *testing.T, ctx context.Context, name string, labels map[string]string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := k8sClient.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	// The controller may offer the pool's target between the two writes.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		return nodesim.SetReady(ctx, k8sClient, getNode(t, ctx, name), true)
	}); err != nil {
		t.Fatal(err)
	}
}

// annotateNode sets (value "" removes) annotations of a node, as its agent or an admin would.
func annotateNode(t *testing.T, ctx context.Context, name string, set map[string]string) {
	t.Helper()
	// The controller writes the node too (its offer): retry on its writes as kubectl would.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n := getNode(t, ctx, name)
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		for k, v := range set {
			if v == "" {
				delete(n.Annotations, k)
			} else {
				n.Annotations[k] = v
			}
		}
		return k8sClient.Update(ctx, n)
	}); err != nil {
		t.Fatal(err)
	}
}

// reportPending plays the agent finding that adopting the node into target writes a file and
// reboots.
func reportPending(t *testing.T, ctx context.Context, name, target string) {
	t.Helper()
	plan, err := adoption.Encode(adoption.Plan{Target: target, Files: []adoption.FileChange{{Path: "/etc/chrony.conf", Change: adoption.ChangeContent}},
		Actions: "Reboot", Drain: true, Reboot: true})
	if err != nil {
		t.Fatal(err)
	}
	annotateNode(t, ctx, name, map[string]string{protocol.AdoptionAnnotation: protocol.AdoptionPending, protocol.AdoptionPlanAnnotation: plan})
}

// reportAdopted plays the agent finishing the update it was given.
func reportAdopted(t *testing.T, ctx context.Context, name, config string) {
	t.Helper()
	annotateNode(t, ctx, name, map[string]string{protocol.CurrentConfigAnnotation: config, protocol.StateAnnotation: string(protocol.NodeDone),
		protocol.AdoptionAnnotation: "", protocol.AdoptionPlanAnnotation: ""})
}

func waitNode(t *testing.T, ctx context.Context, name, what string, cond func(*corev1.Node) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond(getNode(t, ctx, name)) {
		if time.Now().After(deadline) {
			t.Fatalf("node %s: timed out waiting for %s; annotations %v", name, what, getNode(t, ctx, name).Annotations)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func desiredIs(config string) func(*corev1.Node) bool {
	return func(n *corev1.Node) bool { return n.Annotations[protocol.DesiredConfigAnnotation] == config }
}

// TestAdoptionNeedsApproval: unmanaged nodes of a pool are offered its target; one whose agent
// reported a plan waits, named in NodesAwaitingAdoption, and is never given desiredConfig until
// the admin approves it on the node; then it is adopted, counted, and loses its offer.
func TestAdoptionNeedsApproval(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const role, cfg = "adopt", "rendered-adopt-1"
	newPool(t, ctx, role, role, cfg, nil)
	labels := map[string]string{roleLabel(role): ""}
	createStranger(t, ctx, "adopt-a", labels)
	createStranger(t, ctx, "adopt-b", labels)

	for _, name := range []string{"adopt-a", "adopt-b"} {
		waitNode(t, ctx, name, "the offer", func(n *corev1.Node) bool { return n.Annotations[protocol.AdoptionTargetAnnotation] == cfg })
	}
	reportPending(t, ctx, "adopt-a", cfg)
	p := waitPool(t, ctx, role, "NodesAwaitingAdoption", time.Minute, func(p *mcfgv1.MachineConfigPool) bool {
		return poolcondition.IsTrue(&p.Status, poolcondition.NodesAwaitingAdoption)
	})
	c := poolcondition.Get(&p.Status, poolcondition.NodesAwaitingAdoption)
	if !strings.Contains(c.Message, "Node adopt-a: adopting into rendered-adopt-1 would write 1 file (/etc/chrony.conf), drain, then reboot") ||
		!strings.Contains(c.Message, "mco adopt --pool adopt") || strings.Contains(c.Message, "adopt-b") {
		t.Errorf("NodesAwaitingAdoption message %q", c.Message)
	}
	if p.Status.MachineCount != 0 || poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolDegraded) {
		t.Errorf("waiting nodes counted (%d machines) or the pool Degraded: %+v", p.Status.MachineCount, p.Status)
	}
	waitNodeEvent(t, ctx, "adopt-a", ReasonAdoptionPending, "Waiting for approval to adopt the node into rendered-adopt-1")
	time.Sleep(time.Second) // anything the controller would do, it has done by now
	for _, name := range []string{"adopt-a", "adopt-b"} {
		if got := getNode(t, ctx, name).Annotations[protocol.DesiredConfigAnnotation]; got != "" {
			t.Fatalf("%s was given desiredConfig %s without approval", name, got)
		}
	}

	t.Log("approved on the node, it is adopted")
	annotateNode(t, ctx, "adopt-a", map[string]string{protocol.AdoptAnnotation: protocol.AdoptApproved})
	waitNode(t, ctx, "adopt-a", "desiredConfig", desiredIs(cfg))
	waitNodeEvent(t, ctx, "adopt-a", ReasonAdoptionStarted, "the node is updated to rendered-adopt-1 as planned")
	waitPool(t, ctx, role, "the node counted, unavailable", time.Minute, func(p *mcfgv1.MachineConfigPool) bool {
		return p.Status.MachineCount == 1 && p.Status.UnavailableMachineCount == 1 && !poolcondition.IsTrue(&p.Status, poolcondition.NodesAwaitingAdoption)
	})
	if got := getNode(t, ctx, "adopt-a").Annotations[protocol.AdoptAnnotation]; got != protocol.AdoptApproved {
		t.Errorf("the approval of a node still being adopted is %q, want it kept", got)
	}
	reportAdopted(t, ctx, "adopt-a", cfg)
	waitPool(t, ctx, role, "Updated with the adopted node", time.Minute, updatedTo(cfg, 1))
	waitNode(t, ctx, "adopt-a", "the offer removed", func(n *corev1.Node) bool { _, ok := n.Annotations[protocol.AdoptionTargetAnnotation]; return !ok })
	t.Log("adopted, its approval is spent: a later adoption (after mco daemon revert) is approved anew")
	waitNode(t, ctx, "adopt-a", "the approval removed", func(n *corev1.Node) bool { _, ok := n.Annotations[protocol.AdoptAnnotation]; return !ok })
	annotateNode(t, ctx, "adopt-a", map[string]string{protocol.CurrentConfigAnnotation: "", protocol.DesiredConfigAnnotation: "", protocol.StateAnnotation: ""})
	waitNode(t, ctx, "adopt-a", "the offer again after the revert", func(n *corev1.Node) bool { return n.Annotations[protocol.AdoptionTargetAnnotation] == cfg })
	reportPending(t, ctx, "adopt-a", cfg)
	waitPool(t, ctx, role, "adopt-a waiting for approval again", time.Minute, func(p *mcfgv1.MachineConfigPool) bool {
		c := poolcondition.Get(&p.Status, poolcondition.NodesAwaitingAdoption)
		return c != nil && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, "Node adopt-a: adopting")
	})
	if got := getNode(t, ctx, "adopt-a").Annotations[protocol.DesiredConfigAnnotation]; got != "" {
		t.Errorf("re-adopted into %s on the first adoption's approval", got)
	}
	if got := getNode(t, ctx, "adopt-b").Annotations[protocol.DesiredConfigAnnotation]; got != "" {
		t.Errorf("adopt-b, which never reported, was given %s", got)
	}
}

// TestAdoptionApprovedOnPoolWithinMaxUnavailable: the pool's approval adopts every node
// waiting, one at a time with maxUnavailable 1: the second once the first reports Done.
func TestAdoptionApprovedOnPoolWithinMaxUnavailable(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const role, cfg = "adoptpool", "rendered-adoptpool-1"
	newPool(t, ctx, role, role, cfg, nil)
	labels := map[string]string{roleLabel(role): ""}
	createStranger(t, ctx, "adoptpool-a", labels)
	createStranger(t, ctx, "adoptpool-b", labels)
	for _, name := range []string{"adoptpool-a", "adoptpool-b"} {
		waitNode(t, ctx, name, "the offer", func(n *corev1.Node) bool { return n.Annotations[protocol.AdoptionTargetAnnotation] == cfg })
		reportPending(t, ctx, name, cfg)
	}
	waitPool(t, ctx, role, "both awaiting adoption", time.Minute, func(p *mcfgv1.MachineConfigPool) bool {
		c := poolcondition.Get(&p.Status, poolcondition.NodesAwaitingAdoption)
		return c != nil && strings.Contains(c.Message, "adoptpool-a") && strings.Contains(c.Message, "adoptpool-b")
	})

	editPool(t, ctx, role, func(p *mcfgv1.MachineConfigPool) {
		p.Annotations = map[string]string{protocol.AdoptAnnotation: protocol.AdoptApproved}
	})
	var first, second string
	deadline := time.Now().Add(time.Minute)
	for first == "" {
		for _, name := range []string{"adoptpool-a", "adoptpool-b"} {
			if getNode(t, ctx, name).Annotations[protocol.DesiredConfigAnnotation] == cfg {
				first = name
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the pool's approval adopted no node")
		}
		time.Sleep(50 * time.Millisecond)
	}
	second = map[string]string{"adoptpool-a": "adoptpool-b", "adoptpool-b": "adoptpool-a"}[first]
	time.Sleep(time.Second) // anything the controller would do, it has done by now
	if got := getNode(t, ctx, second).Annotations[protocol.DesiredConfigAnnotation]; got != "" {
		t.Fatalf("%s was given %s while %s is being adopted, maxUnavailable 1", second, got, first)
	}
	reportAdopted(t, ctx, first, cfg)
	waitNode(t, ctx, second, "desiredConfig after the first is Done", desiredIs(cfg))
	reportAdopted(t, ctx, second, cfg)
	waitPool(t, ctx, role, "Updated with both", time.Minute, updatedTo(cfg, 2))
}

// TestAdoptionPendingOnceAcrossRestarts: a restarted controller (a new Reconciler) does not
// report again the nodes that were waiting when it first decided their pool; a node that
// starts waiting later is reported, once, and so is a node that waits again after its wait
// ended.
func TestAdoptionPendingOnceAcrossRestarts(t *testing.T) {
	const target = "rendered-worker-1"
	pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}
	pool.Spec.Configuration.Name = target
	plan, err := adoption.Encode(adoption.Plan{Target: target, Files: []adoption.FileChange{{Path: "/etc/chrony.conf", Change: adoption.ChangeContent}}})
	if err != nil {
		t.Fatal(err)
	}
	stranger := func(name string, waiting bool) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{protocol.AdoptionTargetAnnotation: target}}}
		if waiting {
			n.Annotations[protocol.AdoptionAnnotation] = protocol.AdoptionPending
			n.Annotations[protocol.AdoptionPlanAnnotation] = plan
		}
		return n
	}
	var r *Reconciler
	var events *record.FakeRecorder
	restart := func() {
		events = record.NewFakeRecorder(10)
		r = &Reconciler{Recorder: events, reported: map[string]string{}}
	}
	// decide reports one decision of the pool over nodes, and says which nodes it reported
	// waiting.
	decide := func(nodes ...*corev1.Node) []string {
		r.reportAdoptions(pool, nodes, rollout.Decide(rollout.Input{Pool: pool, Unmanaged: nodes, Now: metav1.Now()}), nil)
		var reported []string
		for len(events.Events) > 0 {
			e := <-events.Events
			for _, n := range nodes {
				if strings.Contains(e, ReasonAdoptionPending) && strings.Contains(e, "mco adopt "+n.Name+"`") {
					reported = append(reported, n.Name)
				}
			}
		}
		return reported
	}
	for _, step := range []struct {
		what    string
		restart bool
		nodes   []*corev1.Node
		want    []string
	}{
		{"a offered, not waiting yet", false, []*corev1.Node{stranger("a", false)}, nil},
		{"a starts waiting", false, []*corev1.Node{stranger("a", true)}, []string{"a"}},
		{"a still waiting", false, []*corev1.Node{stranger("a", true)}, nil},
		{"the controller restarted: a was waiting already", true, []*corev1.Node{stranger("a", true), stranger("b", false)}, nil},
		{"b starts waiting after the restart", false, []*corev1.Node{stranger("a", true), stranger("b", true)}, []string{"b"}},
		{"both still waiting", false, []*corev1.Node{stranger("a", true), stranger("b", true)}, nil},
		{"a's wait ends (its host was changed to match)", false, []*corev1.Node{stranger("a", false), stranger("b", true)}, nil},
		{"a waits again", false, []*corev1.Node{stranger("a", true), stranger("b", true)}, []string{"a"}},
	} {
		if r == nil || step.restart {
			restart()
		}
		if got := decide(step.nodes...); !slices.Equal(got, step.want) {
			t.Errorf("%s: reported %v waiting, want %v", step.what, got, step.want)
		}
	}
}
