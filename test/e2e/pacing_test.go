package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/pacing"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/test/clustertest"
)

// pacedRollout: a MachineConfigPoolRollout with a one-node canary and a soak holds the
// rest of the worker pool on real machines until the soak has passed on the real clock (the
// controller's own requeue, no poke), then lets maxUnavailable roll the rest.
// The policy is deleted when it ends, so later steps roll out unpaced.
func pacedRollout(t *testing.T, ctx context.Context, cl *clustertest.Cluster, workers []string) {
	const soak = 15 * time.Second
	ctx, cancel := context.WithTimeout(ctx, 8*time.Minute)
	defer cancel()
	before := cl.Pool(t, ctx).Spec.Configuration.Name

	policy := &rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: "workers"},
		Spec: rolloutv1.MachineConfigPoolRolloutSpec{
			PoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pools.operator.machineconfiguration.openshift.io/worker": ""}},
			Canary:       &rolloutv1.Canary{Nodes: intstr.FromInt32(1)},
			Soak:         metav1.Duration{Duration: soak},
		}}
	if err := cl.C.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cl.C.Delete(context.Background(), policy); err != nil {
			t.Errorf("deleting the MachineConfigPoolRollout: %v", err)
		}
	})

	// When each node was first pointed at a new target, seen by polling.
	var mu sync.Mutex
	targetedAt := map[string]time.Time{}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go func() {
		for clustertest.Sleep(watchCtx, 100*time.Millisecond) {
			var nodes corev1.NodeList
			if err := cl.C.List(watchCtx, &nodes, client.HasLabels{clustertest.WorkerSelector}); err != nil {
				continue
			}
			mu.Lock()
			for _, n := range nodes.Items {
				if d := n.Annotations[protocol.DesiredConfigAnnotation]; d != before && d != "" && targetedAt[n.Name].IsZero() {
					targetedAt[n.Name] = time.Now()
				}
			}
			mu.Unlock()
		}
	}()

	if err := cl.C.Create(ctx, clustertest.FileConfig("99-paced", "/etc/paced", "canary first\n")); err != nil {
		t.Fatal(err)
	}
	var canary rolloutv1.PoolRolloutStatus
	clustertest.Eventually(t, 3*time.Minute, "the canary updated and soaking", func() bool {
		var p rolloutv1.MachineConfigPoolRollout
		if err := cl.C.Get(ctx, client.ObjectKeyFromObject(policy), &p); err != nil {
			return false
		}
		e := pacing.PoolEntry(&p.Status, protocol.WorkerPool)
		if e == nil || e.Phase != rolloutv1.PhaseCanary || e.BatchFinishedAt == nil {
			return false
		}
		canary = *e
		return true
	})
	mu.Lock()
	if len(targetedAt) != 1 {
		t.Errorf("while the canary soaks %d nodes were targeted (%v), want 1", len(targetedAt), targetedAt)
	}
	mu.Unlock()
	after := cl.WaitUpdated(t, ctx, before, int32(len(workers)))
	if after != canary.Target {
		t.Errorf("the pool ended on %s, the canary was on %s", after, canary.Target)
	}
	stopWatch()

	mu.Lock()
	defer mu.Unlock()
	if len(targetedAt) != len(workers) {
		t.Fatalf("targeted %v, want all %d workers", targetedAt, len(workers))
	}
	// Only the canary may start before its soak ends (batchFinishedAt is truncated to the
	// second, hence the second of slack).
	released := canary.BatchFinishedAt.Time.Add(soak).Add(-time.Second)
	var early []string
	for name, at := range targetedAt {
		if at.Before(released) {
			early = append(early, name+" at "+at.Format(time.StampMilli))
		}
	}
	if len(early) != 1 {
		t.Errorf("targeted before the soak ended at %s: %v; want only the canary", released.Format(time.StampMilli), early)
	}
	var p rolloutv1.MachineConfigPoolRollout
	if err := cl.C.Get(ctx, client.ObjectKeyFromObject(policy), &p); err != nil {
		t.Fatal(err)
	}
	e := pacing.PoolEntry(&p.Status, protocol.WorkerPool)
	if e == nil || e.Batch < 2 || p.Status.NodesDone != int32(len(workers)) {
		t.Errorf("policy status after the rollout: %+v", p.Status)
	}
}
