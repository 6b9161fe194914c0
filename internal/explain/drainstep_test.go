package explain

import (
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/drainpolicy"
	"github.com/mco-dev/mco/internal/protocol"
)

// spec.drain's steps, as explain names them for a blocked drain, a skipped node and the pool.
func TestExplainDrainSteps(t *testing.T) {
	a := protocol.StateAnnotation
	skipDelete := policy("paced", rolloutv1.MachineConfigPoolRolloutSpec{Drain: &rolloutv1.DrainPolicy{
		BlockedTimeout: &metav1.Duration{Duration: 10 * time.Minute}, OnBlocked: rolloutv1.DrainSkip,
		DeleteBlockingPodsAfter: &metav1.Duration{Duration: 30 * time.Minute},
	}}, rolloutv1.PoolRolloutStatus{})
	blocked := workerNode("w1", oldConfig, newConfig, a, "Working",
		protocol.DesiredDrainAnnotation, "drain-"+newConfig,
		protocol.DrainStartedAtAnnotation, now.Add(-4*time.Minute).Format(time.RFC3339),
		protocol.DrainBlockedSinceAnnotation, now.Add(-4*time.Minute).Format(time.RFC3339))
	blocked.Spec.Unschedulable = true
	retried := workerNode("w1", oldConfig, newConfig, a, "Working",
		protocol.DesiredDrainAnnotation, "drain-"+newConfig,
		protocol.DrainStartedAtAnnotation, now.Add(-time.Minute).Format(time.RFC3339),
		protocol.DrainBlockedSinceAnnotation, now.Add(-time.Minute).Format(time.RFC3339),
		rolloutv1.DrainBlockedForAnnotation, "600",
		protocol.DrainBlockedAnnotation, blockedPDB)
	retried.Spec.Unschedulable = true
	skipped := workerNode("w1", oldConfig, oldConfig,
		rolloutv1.DrainSkippedAnnotation, drainpolicy.SkipRecord(newConfig, blockedPDB, now.Add(-3*time.Minute)),
		rolloutv1.DrainBlockedForAnnotation, "600")
	waiting := workerNode("w2", oldConfig, oldConfig)
	done := workerNode("w2", newConfig, newConfig)
	for _, tc := range []struct {
		name     string
		node     corev1.Node
		others   []corev1.Node
		policies []rolloutv1.MachineConfigPoolRollout
		want     want
	}{{
		name: "blocked, skip to come while another node waits", node: blocked, others: []corev1.Node{waiting},
		policies: []rolloutv1.MachineConfigPoolRollout{skipDelete},
		want:     want{next: []string{"drain blocked for 4m0s", "skip at 2026-11-23T12:06:00Z (in 6m0s; spec.drain.blockedTimeout 10m0s)", "meanwhile"}},
	}, {
		name: "tried again after the rest: deletion to come", node: retried, others: []corev1.Node{done},
		policies: []rolloutv1.MachineConfigPoolRollout{skipDelete},
		want: want{
			summary: []string{"drain blocked"},
			next:    []string{"(11m0s in all this rollout)", "delete the blocking pods at 2026-11-23T12:19:00Z (in 19m0s; spec.drain.deleteBlockingPodsAfter 30m0s)", "no other node of the pool waits"},
		},
	}, {
		name: "without spec.drain it waits", node: blocked, others: []corev1.Node{waiting},
		want: want{next: []string{"waiting (no spec.drain"}},
	}, {
		name: "skipped, tried again after the others", node: skipped, others: []corev1.Node{waiting},
		policies: []rolloutv1.MachineConfigPoolRollout{skipDelete},
		want: want{
			summary: []string{"its drain for rendered-worker-new was skipped"},
			why:     []string{"skipped at 2026-11-23T11:57:00Z (spec.drain.onBlocked Skip); tried again after the pool's other nodes", "PodDisruptionBudget shop/web-pdb"},
			next:    []string{"once no other node of the pool waits"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pool := workerPool(t, newConfig)
			c := Cluster{Now: now, Pools: []mcfgv1.MachineConfigPool{pool}, Nodes: append([]corev1.Node{tc.node}, tc.others...), Policies: tc.policies}
			x, err := Node(c, tc.node.Name)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.check(t, x)
		})
	}
	pool := workerPool(t, newConfig)
	x, err := Pool(Cluster{Now: now, Pools: []mcfgv1.MachineConfigPool{pool}, Nodes: []corev1.Node{skipped, waiting}, Policies: []rolloutv1.MachineConfigPoolRollout{skipDelete}}, "worker")
	if err != nil {
		t.Fatal(err)
	}
	want{why: []string{"node w1: drain for rendered-worker-new skipped at"}}.check(t, x)
}
