package drain

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

func TestDrainEvictsKeepsDaemonSetPodsAndUncordons(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ns = "drain-plain"
	node := newNode(t, ctx, "drain-plain", nil)
	namespace(t, ctx, ns)
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "example.com/a:1"}}},
			},
		},
	}
	create(t, ctx, ds)
	app := runningPod(t, ctx, ns, "app", node.Name, map[string]string{"app": "web"}, nil)
	dsPod := runningPod(t, ctx, ns, "agent-x", node.Name, map[string]string{"app": "agent"},
		[]metav1.OwnerReference{*metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))})
	// A DaemonSet pod whose DaemonSet is gone (deleted with --cascade=orphan) goes, as kubectl's
	// drain --force evicts it; a mirror pod (the kubelet's static pod) stays.
	gone := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: ns, UID: "0a7d8c1e-0000-4000-8000-000000000001"}}
	orphan := runningPod(t, ctx, ns, "gone-x", node.Name, map[string]string{"app": "gone"},
		[]metav1.OwnerReference{*metav1.NewControllerRef(gone, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))})
	static := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "static-" + node.Name, Namespace: ns, Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "1"}},
		Spec:       corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "c", Image: "example.com/c:1"}}},
	}
	create(t, ctx, static)

	request(t, ctx, node.Name, protocol.DrainRequest("rendered-1"))
	n := waitNode(t, ctx, node.Name, "drain acknowledged", func(n *corev1.Node) bool {
		return n.Annotations[protocol.LastAppliedDrainAnnotation] == protocol.DrainRequest("rendered-1")
	})
	if !n.Spec.Unschedulable {
		t.Error("drained node is not cordoned")
	}
	if _, ok := n.Annotations[protocol.DrainStartedAtAnnotation]; ok {
		t.Error("drain-started-at left after the acknowledgement")
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(app), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("application pod not evicted: %v", err)
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(dsPod), &corev1.Pod{}); err != nil {
		t.Errorf("DaemonSet pod was removed: %v", err)
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(orphan), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("orphaned DaemonSet pod not evicted: %v", err)
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(static), &corev1.Pod{}); err != nil {
		t.Errorf("mirror pod was removed: %v", err)
	}

	request(t, ctx, node.Name, protocol.UncordonRequest("rendered-1"))
	n = waitNode(t, ctx, node.Name, "uncordon acknowledged", func(n *corev1.Node) bool {
		return n.Annotations[protocol.LastAppliedDrainAnnotation] == protocol.UncordonRequest("rendered-1")
	})
	if n.Spec.Unschedulable {
		t.Error("node still cordoned after the uncordon request")
	}
}

// A drain that started (per its annotation) an hour ago, before a controller restart, is over
// the threshold at once; a node uncordoned mid-drain is cordoned again.
func TestBlockedDrainResumesFromAnnotationAndRecordons(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ns = "drain-blocked"
	node := newNode(t, ctx, "drain-blocked", map[string]string{
		protocol.DrainStartedAtAnnotation: time.Now().Add(-time.Hour).UTC().Format(time.RFC3339),
	})
	namespace(t, ctx, ns)
	runningPod(t, ctx, ns, "db-0", node.Name, map[string]string{"app": "db"}, nil)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "db-pdb", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptrTo(intstr.FromInt32(0)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
		},
	}
	create(t, ctx, pdb)
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DesiredHealthy: 1, ExpectedPods: 1}
	if err := k8sClient.Status().Update(ctx, pdb); err != nil {
		t.Fatal(err)
	}

	request(t, ctx, node.Name, protocol.DrainRequest("rendered-2"))
	n := waitNode(t, ctx, node.Name, "blocked report", func(n *corev1.Node) bool {
		return n.Annotations[protocol.DrainBlockedAnnotation] != ""
	})
	want := "pod drain-blocked/db-0 cannot be evicted: PodDisruptionBudget drain-blocked/db-pdb"
	if got := n.Annotations[protocol.DrainBlockedAnnotation]; !strings.HasPrefix(got, want) {
		t.Errorf("drain-blocked = %q, want it to start with %q", got, want)
	}
	if got := testutil.ToFloat64(drainErr.WithLabelValues(node.Name)); got != 1 {
		t.Errorf("mcc_drain_err = %v, want 1", got)
	}
	if got := testutil.ToFloat64(blockedByBudget.WithLabelValues(node.Name)); got != 1 {
		t.Errorf("mcc_drain_blocked_by_pdb = %v, want 1", got)
	}
	if started := n.Annotations[protocol.DrainStartedAtAnnotation]; started == "" || time.Since(mustParse(t, started)) < 50*time.Minute {
		t.Errorf("drain-started-at %q was reset instead of resumed", started)
	}

	patch := client.MergeFrom(n.DeepCopy())
	n.Spec.Unschedulable = false
	if err := k8sClient.Patch(ctx, n, patch); err != nil {
		t.Fatal(err)
	}
	waitNode(t, ctx, node.Name, "re-cordon", func(n *corev1.Node) bool { return n.Spec.Unschedulable })
	if n := waitNode(t, ctx, node.Name, "", func(*corev1.Node) bool { return true }); n.Annotations[protocol.LastAppliedDrainAnnotation] != "" {
		t.Errorf("drain acknowledged while the budget still refuses: %v", n.Annotations)
	}
}

func mustParse(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func ptrTo[T any](v T) *T { return &v }

func create(t *testing.T, ctx context.Context, obj client.Object) {
	t.Helper()
	if err := k8sClient.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
}

func namespace(t *testing.T, ctx context.Context, ns string) {
	t.Helper()
	create(t, ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	create(t, ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}})
}

func newNode(t *testing.T, ctx context.Context, name string, annotations map[string]string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
	create(t, ctx, n)
	return n
}

// runningPod creates a pod bound to node, with no grace period (there is no kubelet to finish a
// graceful deletion) and marked Running (evictions ignore budgets for Pending pods).
func runningPod(t *testing.T, ctx context.Context, ns, name, node string, labels map[string]string, owners []metav1.OwnerReference) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: owners},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			TerminationGracePeriodSeconds: ptrTo(int64(0)),
			Containers:                    []corev1.Container{{Name: "c", Image: "example.com/c:1"}},
		},
	}
	create(t, ctx, p)
	p.Status.Phase = corev1.PodRunning
	if err := k8sClient.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func request(t *testing.T, ctx context.Context, node, value string) {
	t.Helper()
	n := &corev1.Node{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(n.DeepCopy())
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[protocol.DesiredDrainAnnotation] = value
	if err := k8sClient.Patch(ctx, n, patch); err != nil {
		t.Fatal(err)
	}
}

func waitNode(t *testing.T, ctx context.Context, name, what string, cond func(*corev1.Node) bool) *corev1.Node {
	t.Helper()
	n := &corev1.Node{}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, n); err == nil && cond(n) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("node %s: timed out waiting for %s; annotations %v unschedulable=%v", name, what, n.Annotations, n.Spec.Unschedulable)
	return nil
}
