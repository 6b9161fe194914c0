package stranded

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/daemon/bootguard"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/test/clustertest"
)

// brokenKubeletReverts: a MachineConfig whose kubelet drop-in keeps the kubelet from starting
// reboots the first worker into a kubelet that never runs. Its boot guard (a host unit, no
// kubelet or pod involved) reverts the update after the policy's nodeBootTimeout and reboots:
// the node is Ready again on its previous config, Degraded with NodeBootFailed, and no other
// worker got the bad target (onFailure unset: Pause). Deleting the MachineConfig brings the
// pool's target back; the node goes Done and is uncordoned.
func brokenKubeletReverts(t *testing.T, ctx context.Context, cl *clustertest.Cluster) {
	b := bootBrokenKubelet(t, ctx, cl, "")
	defer b.cleanup()
	var n *corev1.Node
	clustertest.Eventually(t, 2*time.Minute, b.first+" Degraded with NodeBootFailed", func() bool {
		n = cl.Node(t, ctx, b.first)
		return n.Annotations[protocol.StateAnnotation] == string(protocol.NodeDegraded) &&
			strings.HasPrefix(n.Annotations[protocol.ReasonAnnotation], "NodeBootFailed: ")
	})
	want := "NodeBootFailed: kubelet not healthy within 40s after the reboot into " + b.bad
	if reason := n.Annotations[protocol.ReasonAnnotation]; !strings.HasPrefix(reason, want) || !strings.HasSuffix(reason, "; reverted to "+b.before) {
		t.Errorf("reason %q, want %q… reverted to %s", reason, want, b.before)
	}
	t.Logf("%s reports: %s", b.first, n.Annotations[protocol.ReasonAnnotation])
	if got := n.Annotations[protocol.CurrentConfigAnnotation]; got != b.before {
		t.Errorf("currentConfig %s, want %s", got, b.before)
	}
	b.checkReported(t, ctx)
	clustertest.Eventually(t, time.Minute, "the MachineConfigNode of "+b.first+" degraded with NodeBootFailed", func() bool {
		var mcn mcfgv1.MachineConfigNode
		if cl.C.Get(ctx, client.ObjectKey{Name: b.first}, &mcn) != nil {
			return false
		}
		c := meta.FindStatusCondition(mcn.Status.Conditions, string(mcfgv1.MachineConfigNodeNodeDegraded))
		return c != nil && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, "NodeBootFailed: ")
	})
	if !n.Spec.Unschedulable {
		t.Errorf("%s is not cordoned while its update failed", b.first)
	}
	b.checkOnlyFirstTargeted(t)

	// The admin deletes the bad MachineConfig: the pool's target returns to the previous render.
	b.deleteConfig(t, ctx)
	b.waitRecovered(t, ctx)
	b.stop(t, ctx)
}

// brokenKubeletRollsBack: the same broken kubelet under spec.onFailure: Rollback. The first
// worker reverts itself; its NodeBootFailed makes the pool undo the rollout on its own: the
// pool's target returns to the previous render, held there naming the failed one, no other
// worker touched. Deleting the bad MachineConfig renders the previous config again, which ends
// the hold.
func brokenKubeletRollsBack(t *testing.T, ctx context.Context, cl *clustertest.Cluster) {
	b := bootBrokenKubelet(t, ctx, cl, rolloutv1.FailureRollback)
	defer b.cleanup()
	var rb *rolloutv1.Rollback
	var heldAt time.Time
	clustertest.Eventually(t, 2*time.Minute, "the worker pool held on "+b.before+" by spec.onFailure", func() bool {
		p := cl.Pool(t, ctx)
		raw, ok := p.Annotations[rolloutv1.RollbackAnnotation]
		c := poolcondition.Get(&p.Status, poolcondition.RolledBack)
		if !ok || c == nil || c.Status != corev1.ConditionTrue || p.Spec.Configuration.Name != b.before {
			return false
		}
		heldAt = time.Now()
		rb = &rolloutv1.Rollback{}
		if err := json.Unmarshal([]byte(raw), rb); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if !strings.Contains(c.Message, b.bad) {
			t.Errorf("RolledBack condition does not name %s: %s", b.bad, c.Message)
		}
		return true
	})
	if rb.From != b.bad || rb.To != b.before || rb.By != "spec.onFailure of mcprollout/"+b.policy.Name ||
		!strings.Contains(rb.Reason, b.first) || !strings.Contains(rb.Reason, "NodeBootFailed") {
		t.Errorf("rollback %+v, want from %s to %s by the policy, naming %s and NodeBootFailed", *rb, b.bad, b.before, b.first)
	}
	t.Logf("from the broken boot to the pool held: %s (rollback: %s)", heldAt.Sub(b.brokenBootAt).Round(time.Second), rb.Reason)
	b.checkReported(t, ctx)
	clustertest.Eventually(t, 3*time.Minute, "worker pool Updated on "+b.before+", held", func() bool {
		p := cl.Pool(t, ctx)
		return p.Spec.Configuration.Name == b.before && p.Status.Configuration.Name == b.before &&
			p.Status.UpdatedMachineCount == 3 && poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolUpdated)
	})
	clustertest.Eventually(t, time.Minute, b.first+" Done and uncordoned on "+b.before, func() bool {
		n := cl.Node(t, ctx, b.first)
		return n.Annotations[protocol.StateAnnotation] == string(protocol.NodeDone) && !n.Spec.Unschedulable &&
			n.Annotations[protocol.CurrentConfigAnnotation] == b.before
	})
	b.checkOnlyFirstTargeted(t)

	// Deleting the bad MachineConfig renders the previous config again: the hold ends.
	b.deleteConfig(t, ctx)
	clustertest.Eventually(t, 2*time.Minute, "the rollback hold ended", func() bool {
		p := cl.Pool(t, ctx)
		_, held := p.Annotations[rolloutv1.RollbackAnnotation]
		return !held && !poolcondition.IsTrue(&p.Status, poolcondition.RolledBack)
	})
	b.waitRecovered(t, ctx)
	b.stop(t, ctx)
}

// brokenBoot is a worker rebooted into a kubelet-breaking render and reverted by its guard.
type brokenBoot struct {
	cl           *clustertest.Cluster
	policy       *rolloutv1.MachineConfigPoolRollout
	broken       *mcfgv1.MachineConfig
	deleted      bool
	before, bad  string
	first        string
	boots        int // first's boots before the broken one
	brokenBootAt time.Time
	mu           sync.Mutex
	targeted     map[string]bool
	stopWatch    context.CancelFunc
}

const brokenKubeletDropIn = "/etc/systemd/system/kubelet.service.d/99-broken.conf"

// bootBrokenKubelet applies the kubelet-breaking MachineConfig under a policy with a 40 s
// nodeBootTimeout and onFailure, and returns once the first worker given it has booted into
// it, been reverted by its guard, rebooted and is Ready on its previous config.
func bootBrokenKubelet(t *testing.T, ctx context.Context, cl *clustertest.Cluster, onFailure rolloutv1.FailurePolicy) *brokenBoot {
	b := &brokenBoot{cl: cl, targeted: map[string]bool{}}
	b.before = cl.Pool(t, ctx).Spec.Configuration.Name
	// Every reboot of the scenarios before this one was guarded: each guard found its node
	// healthy and disarmed, and none reverted anything.
	var workers corev1.NodeList
	if err := cl.C.List(ctx, &workers, client.HasLabels{clustertest.WorkerSelector}); err != nil || len(workers.Items) != 3 {
		t.Fatalf("listing the 3 workers: %d, %v", len(workers.Items), err)
	}
	for _, w := range workers.Items {
		name := w.Name
		clustertest.Eventually(t, time.Minute, name+"'s earlier boot guards disarmed", func() bool {
			_, armed := cl.Output(ctx, name, "test", "-e", bootguard.RecordPath)
			return armed != nil
		})
		if f := cl.NodeFile(ctx, name, bootguard.FailedPath); f != "" {
			t.Fatalf("%s reverted a boot before this scenario: %s", name, f)
		}
	}
	b.policy = &rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: "broken-kubelet"},
		Spec: rolloutv1.MachineConfigPoolRolloutSpec{
			PoolSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"pools.operator.machineconfiguration.openshift.io/worker": ""}},
			NodeBootTimeout: &metav1.Duration{Duration: 40 * time.Second},
			OnFailure:       onFailure,
		}}
	if err := cl.C.Create(ctx, b.policy); err != nil {
		t.Fatal(err)
	}
	b.broken = clustertest.FileConfig("99-broken-kubelet", brokenKubeletDropIn, "[Service]\nExecStartPre=/bin/false\n")
	if err := cl.C.Create(ctx, b.broken); err != nil {
		b.cleanup()
		t.Fatal(err)
	}

	clustertest.Eventually(t, 2*time.Minute, "the pool targeting the broken render", func() bool {
		p := cl.Pool(t, ctx)
		b.bad = p.Spec.Configuration.Name
		return b.bad != b.before && clustertest.HasSource(p, b.broken.Name)
	})
	// Which workers are ever pointed at the bad target, polled throughout.
	watchCtx, stopWatch := context.WithCancel(ctx)
	b.stopWatch = stopWatch
	go func() {
		for clustertest.Sleep(watchCtx, 200*time.Millisecond) {
			var nodes corev1.NodeList
			if err := cl.C.List(watchCtx, &nodes, client.HasLabels{clustertest.WorkerSelector}); err != nil {
				continue
			}
			b.mu.Lock()
			for _, n := range nodes.Items {
				if n.Annotations[protocol.DesiredConfigAnnotation] == b.bad {
					b.targeted[n.Name] = true
				}
			}
			b.mu.Unlock()
		}
	}()
	clustertest.Eventually(t, 2*time.Minute, "a worker given "+b.bad, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		for n := range b.targeted {
			b.first = n
		}
		return b.first != ""
	})
	b.boots = cl.Boots(t, b.first)

	// The broken boot, then the guard's reboot into the previous config.
	clustertest.Eventually(t, 4*time.Minute, b.first+" rebooting into "+b.bad, func() bool {
		if cl.Boots(t, b.first) > b.boots {
			b.brokenBootAt = time.Now()
			return true
		}
		return false
	})
	clustertest.Eventually(t, 5*time.Minute, b.first+" reverted, rebooted and Ready on "+b.before, func() bool {
		if cl.Boots(t, b.first) < b.boots+2 {
			return false
		}
		n := cl.Node(t, ctx, b.first)
		return readySince(n, b.brokenBootAt) && n.Annotations[protocol.CurrentConfigAnnotation] == b.before
	})
	t.Logf("from the broken boot to %s Ready on its previous config: %s", b.first, time.Since(b.brokenBootAt).Round(time.Second))
	if out, err := cl.Output(ctx, b.first, "test", "-e", brokenKubeletDropIn); err == nil {
		t.Errorf("%s still has %s after the revert (%s)", b.first, brokenKubeletDropIn, out)
	}
	return b
}

// checkReported: the event NodeBootFailed of the first worker (it stays once the pool moved on).
func (b *brokenBoot) checkReported(t *testing.T, ctx context.Context) {
	t.Helper()
	clustertest.Eventually(t, time.Minute, "event NodeBootFailed of "+b.first, func() bool {
		var evs corev1.EventList
		if err := b.cl.C.List(ctx, &evs, client.InNamespace(metav1.NamespaceDefault)); err != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == b.first && e.Reason == "NodeBootFailed" && e.Type == corev1.EventTypeWarning {
				return true
			}
		}
		return false
	})
}

// checkOnlyFirstTargeted: no worker but the first was ever given the bad target.
func (b *brokenBoot) checkOnlyFirstTargeted(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.targeted) != 1 {
		t.Errorf("workers given the broken target: %v, want only %s", b.targeted, b.first)
	}
}

func (b *brokenBoot) deleteConfig(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := b.cl.C.Delete(ctx, b.broken); err != nil {
		t.Fatal(err)
	}
	b.deleted = true
}

// waitRecovered: the pool Updated on the previous render, the first worker Done and
// uncordoned, after exactly two boots (the broken one and the guard's).
func (b *brokenBoot) waitRecovered(t *testing.T, ctx context.Context) {
	t.Helper()
	clustertest.Eventually(t, 3*time.Minute, "worker pool Updated on "+b.before+" again", func() bool {
		p := b.cl.Pool(t, ctx)
		return p.Spec.Configuration.Name == b.before && p.Status.Configuration.Name == b.before &&
			p.Status.UpdatedMachineCount == 3 && poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolUpdated)
	})
	clustertest.Eventually(t, time.Minute, b.first+" Done and uncordoned", func() bool {
		n := b.cl.Node(t, ctx, b.first)
		return n.Annotations[protocol.StateAnnotation] == string(protocol.NodeDone) && !n.Spec.Unschedulable &&
			n.Annotations[protocol.CurrentConfigAnnotation] == b.before
	})
	if got := b.cl.Boots(t, b.first); got != b.boots+2 {
		t.Errorf("%s booted %d times, want 2 (the broken boot and the guard's)", b.first, got-b.boots)
	}
}

// stop ends the watch and deletes the policy: the scenario is over.
func (b *brokenBoot) stop(t *testing.T, ctx context.Context) {
	t.Helper()
	b.stopWatch()
	if err := b.cl.C.Delete(ctx, b.policy); err != nil {
		t.Fatal(err)
	}
}

// cleanup removes what the scenario created, whatever happened.
func (b *brokenBoot) cleanup() {
	if b.stopWatch != nil {
		b.stopWatch()
	}
	if !b.deleted && b.broken != nil {
		_ = b.cl.C.Delete(context.Background(), b.broken)
	}
	_ = client.IgnoreNotFound(b.cl.C.Delete(context.Background(), b.policy))
}

// readySince: the Node's Ready condition is True and was reported after at.
func readySince(n *corev1.Node, at time.Time) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue && c.LastHeartbeatTime.After(at)
		}
	}
	return false
}
