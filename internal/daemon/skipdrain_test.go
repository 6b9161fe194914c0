package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestBlockedDrainSkipped: the node's drain for its target stays blocked (a PodDisruptionBudget
// refuses the eviction) and its desiredConfig is moved back to its current config, as the node
// controller does to skip it (spec.drain.onBlocked: Skip). The agent gives the drain-pending
// update up having written nothing, asks for the uncordon, and is Done in its config again,
// uncordoned, without a reboot; the drain controller stops evicting.
func TestBlockedDrainSkipped(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const name, ns = "skip-blocked-drain", "skip-blocked-drain"
	r0 := machineConfig("rendered-skip-0", map[string]string{"/etc/base.conf": "base"})
	r1 := machineConfig("rendered-skip-1", map[string]string{"/etc/base.conf": "base", "/etc/next.conf": "next"})
	createConfigs(t, ctx, r0, r1)
	root := newRoot(t)
	provision(t, root, r0)
	createBareNode(t, ctx, name)
	mustCreateObj(t, ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	mustCreateObj(t, ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}})
	zero := int64(0)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: ns, Labels: map[string]string{"app": "db"}},
		Spec: corev1.PodSpec{NodeName: name, TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{{Name: "db", Image: "example.com/db:1"}}},
	}
	mustCreateObj(t, ctx, pod)
	pod.Status.Phase = corev1.PodRunning
	if err := env.Client.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	zeroUnavailable := intstr.FromInt32(0)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "db-pdb", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &zeroUnavailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}},
	}
	mustCreateObj(t, ctx, pdb)
	// No disruption controller runs here: the status it would write.
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DesiredHealthy: 1, ExpectedPods: 1}
	if err := env.Client.Status().Update(ctx, pdb); err != nil {
		t.Fatal(err)
	}

	ag := startAgent(t, name, root)
	awaitNode(t, ctx, name, "Done in "+r0.Name, doneIn(r0.Name))
	annotate(t, ctx, name, map[string]string{protocol.DesiredConfigAnnotation: r1.Name})
	awaitNode(t, ctx, name, "its drain blocked", func(a map[string]string) bool {
		return a[protocol.DesiredDrainAnnotation] == protocol.DrainRequest(r1.Name) && a[protocol.DrainBlockedSinceAnnotation] != ""
	})
	annotate(t, ctx, name, map[string]string{protocol.DesiredConfigAnnotation: r0.Name})
	n := awaitNode(t, ctx, name, "Done in "+r0.Name+" again, uncordoned", func(a map[string]string) bool {
		return doneIn(r0.Name)(a) && a[protocol.LastAppliedDrainAnnotation] == protocol.UncordonRequest(r0.Name)
	})
	if n.Spec.Unschedulable {
		t.Errorf("still cordoned: %s", nodeSummary(n))
	}
	if _, err := os.Stat(filepath.Join(root, "/etc/next.conf")); !os.IsNotExist(err) {
		t.Errorf("the skipped config was written: %v", err)
	}
	if got := ag.reboots.Load(); got != 0 {
		t.Errorf("rebooted %d times, want 0", got)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}); err != nil {
		t.Errorf("the pod the budget protects is gone: %v", err)
	}
}

func mustCreateObj(t testing.TB, ctx context.Context, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
}
