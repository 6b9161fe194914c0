package e2e

import (
	"context"
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

func init() {
	strandedScenarios = append(strandedScenarios, strandedScenario{"broken kubelet reverts", brokenKubeletReverts})
}

// brokenKubeletReverts: a MachineConfig whose kubelet drop-in keeps the kubelet from starting
// reboots the first worker into a kubelet that never runs. Its boot guard (a host unit, no
// kubelet or pod involved) reverts the update after the policy's nodeBootTimeout and reboots:
// the node is Ready again on its previous config, Degraded with NodeBootFailed, and no other
// worker got the bad target (onFailure unset: Pause). Deleting the MachineConfig brings the
// pool's target back; the node goes Done and is uncordoned.
func brokenKubeletReverts(t *testing.T, ctx context.Context, cl *clustertest.Cluster) {
	const dropIn = "/etc/systemd/system/kubelet.service.d/99-broken.conf"
	before := cl.Pool(t, ctx).Spec.Configuration.Name
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
	policy := &rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: "broken-kubelet"},
		Spec: rolloutv1.MachineConfigPoolRolloutSpec{
			PoolSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"pools.operator.machineconfiguration.openshift.io/worker": ""}},
			NodeBootTimeout: &metav1.Duration{Duration: 60 * time.Second},
		}}
	if err := cl.C.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cl.C.Delete(context.Background(), policy) }()
	broken := clustertest.FileConfig("99-broken-kubelet", dropIn, "[Service]\nExecStartPre=/bin/false\n")
	if err := cl.C.Create(ctx, broken); err != nil {
		t.Fatal(err)
	}
	deleted := false
	defer func() {
		if !deleted {
			_ = cl.C.Delete(context.Background(), broken)
		}
	}()

	// Which workers are ever pointed at the bad target, polled throughout.
	var bad string
	clustertest.Eventually(t, 2*time.Minute, "the pool targeting the broken render", func() bool {
		p := cl.Pool(t, ctx)
		bad = p.Spec.Configuration.Name
		return bad != before && clustertest.HasSource(p, broken.Name)
	})
	var mu sync.Mutex
	targeted := map[string]bool{}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go func() {
		for clustertest.Sleep(watchCtx, 200*time.Millisecond) {
			var nodes corev1.NodeList
			if err := cl.C.List(watchCtx, &nodes, client.HasLabels{clustertest.WorkerSelector}); err != nil {
				continue
			}
			mu.Lock()
			for _, n := range nodes.Items {
				if n.Annotations[protocol.DesiredConfigAnnotation] == bad {
					targeted[n.Name] = true
				}
			}
			mu.Unlock()
		}
	}()
	var first string
	clustertest.Eventually(t, 2*time.Minute, "a worker given "+bad, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for n := range targeted {
			first = n
		}
		return first != ""
	})
	boots := cl.Boots(t, first)

	// The broken boot, then the guard's reboot into the previous config.
	var brokenBootAt time.Time
	clustertest.Eventually(t, 4*time.Minute, first+" rebooting into "+bad, func() bool {
		if cl.Boots(t, first) > boots {
			brokenBootAt = time.Now()
			return true
		}
		return false
	})
	clustertest.Eventually(t, 5*time.Minute, first+" reverted, rebooted and Ready on "+before, func() bool {
		if cl.Boots(t, first) < boots+2 {
			return false
		}
		n := cl.Node(t, ctx, first)
		return readySince(n, brokenBootAt) && n.Annotations[protocol.CurrentConfigAnnotation] == before
	})
	t.Logf("from the broken boot to %s Ready on its previous config: %s", first, time.Since(brokenBootAt).Round(time.Second))
	var n *corev1.Node
	clustertest.Eventually(t, 2*time.Minute, first+" Degraded with NodeBootFailed", func() bool {
		n = cl.Node(t, ctx, first)
		return n.Annotations[protocol.StateAnnotation] == string(protocol.NodeDegraded) &&
			strings.HasPrefix(n.Annotations[protocol.ReasonAnnotation], "NodeBootFailed: ")
	})
	want := "NodeBootFailed: kubelet not healthy within 1m0s after the reboot into " + bad
	if reason := n.Annotations[protocol.ReasonAnnotation]; !strings.HasPrefix(reason, want) || !strings.HasSuffix(reason, "; reverted to "+before) {
		t.Errorf("reason %q, want %q… reverted to %s", reason, want, before)
	}
	t.Logf("%s reports: %s", first, n.Annotations[protocol.ReasonAnnotation])
	if got := n.Annotations[protocol.CurrentConfigAnnotation]; got != before {
		t.Errorf("currentConfig %s, want %s", got, before)
	}
	clustertest.Eventually(t, time.Minute, "event NodeBootFailed and the MachineConfigNode of "+first+" degraded with it", func() bool {
		var evs corev1.EventList
		if err := cl.C.List(ctx, &evs, client.InNamespace(metav1.NamespaceDefault)); err != nil {
			return false
		}
		seen := false
		for _, e := range evs.Items {
			seen = seen || e.InvolvedObject.Name == first && e.Reason == "NodeBootFailed" && e.Type == corev1.EventTypeWarning
		}
		var mcn mcfgv1.MachineConfigNode
		if !seen || cl.C.Get(ctx, client.ObjectKey{Name: first}, &mcn) != nil {
			return false
		}
		c := meta.FindStatusCondition(mcn.Status.Conditions, string(mcfgv1.MachineConfigNodeNodeDegraded))
		return c != nil && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, "NodeBootFailed: ")
	})
	if out, err := cl.Output(ctx, first, "test", "-e", dropIn); err == nil {
		t.Errorf("%s still has %s after the revert (%s)", first, dropIn, out)
	}
	if !n.Spec.Unschedulable {
		t.Errorf("%s is not cordoned while its update failed", first)
	}
	mu.Lock()
	if len(targeted) != 1 {
		t.Errorf("workers given the broken target: %v, want only %s", targeted, first)
	}
	mu.Unlock()

	// The admin deletes the bad MachineConfig: the pool's target returns to the previous render.
	if err := cl.C.Delete(ctx, broken); err != nil {
		t.Fatal(err)
	}
	deleted = true
	clustertest.Eventually(t, 3*time.Minute, "worker pool Updated on "+before+" again", func() bool {
		p := cl.Pool(t, ctx)
		return p.Spec.Configuration.Name == before && p.Status.Configuration.Name == before &&
			p.Status.UpdatedMachineCount == 3 && poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolUpdated)
	})
	clustertest.Eventually(t, time.Minute, first+" Done and uncordoned", func() bool {
		n := cl.Node(t, ctx, first)
		return n.Annotations[protocol.StateAnnotation] == string(protocol.NodeDone) && !n.Spec.Unschedulable &&
			n.Annotations[protocol.CurrentConfigAnnotation] == before
	})
	if got := cl.Boots(t, first); got != boots+2 {
		t.Errorf("%s booted %d times, want 2 (the broken boot and the guard's)", first, got-boots)
	}
	stopWatch()
	if err := cl.C.Delete(ctx, policy); err != nil {
		t.Fatal(err)
	}
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
