package node

import (
	"context"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// With no kube-controller-manager, nothing computes a PodDisruptionBudget's status; the test
// writes it, as the disruption controller would, to block and then allow the eviction. With no
// kubelet, the test marks the pod Running, and an evicted pod disappears only because its grace
// period is 0.
func TestDrainBlockedByPodDisruptionBudget(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const role, ns = "pdb", "pdb-app"
	newPool(t, ctx, role, role, "rendered-pdb-old", nil)
	nodes := createNodes(t, ctx, role, 1, "rendered-pdb-old", map[string]string{roleLabel(role): ""})
	waitPool(t, ctx, role, "initial Updated", 30*time.Second, updatedTo("rendered-pdb-old", 1))

	pod, pdb := budgetedPod(t, ctx, ns, "web", nodes[0])

	setTarget(t, ctx, role, "rendered-pdb-new")
	p := waitPool(t, ctx, role, "DrainBlocked naming the pod and the budget", 30*time.Second, func(p *mcfgv1.MachineConfigPool) bool {
		return poolcondition.IsTrue(&p.Status, poolcondition.DrainBlocked)
	})
	msg := poolcondition.Get(&p.Status, poolcondition.DrainBlocked).Message
	for _, want := range []string{"node " + nodes[0], "pod pdb-app/web-0", "PodDisruptionBudget pdb-app/web-pdb"} {
		if !strings.Contains(msg, want) {
			t.Errorf("DrainBlocked message %q does not name %q", msg, want)
		}
	}
	if poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolDegraded) {
		t.Errorf("a drain waiting on a budget made the pool Degraded: %+v", p.Status.Conditions)
	}
	if !getNode(t, ctx, nodes[0]).Spec.Unschedulable {
		t.Error("node is not cordoned during its drain")
	}
	waitNodeEvent(t, ctx, nodes[0], "DrainBlocked", "PodDisruptionBudget pdb-app/web-pdb")
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}); err != nil {
		t.Fatalf("the pod protected by the budget is gone: %v", err)
	}

	setBudget(t, ctx, pdb, 1)
	p = waitPool(t, ctx, role, "rollout once the budget allows the eviction", 30*time.Second, updatedTo("rendered-pdb-new", 1))
	if c := poolcondition.Get(&p.Status, poolcondition.DrainBlocked); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("DrainBlocked did not clear: %+v", c)
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod still exists after the drain: %v", err)
	}
	n := getNode(t, ctx, nodes[0])
	for _, k := range []string{protocol.DrainStartedAtAnnotation, protocol.DrainBlockedAnnotation} {
		if v, ok := n.Annotations[k]; ok {
			t.Errorf("%s=%q left on the node after the drain", k, v)
		}
	}
}

func mustCreate(t *testing.T, ctx context.Context, obj client.Object) {
	t.Helper()
	if err := k8sClient.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
}

// setBudget writes the budget's status as the disruption controller would.
func setBudget(t *testing.T, ctx context.Context, pdb *policyv1.PodDisruptionBudget, allowed int32) {
	t.Helper()
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pdb), pdb); err != nil {
		t.Fatal(err)
	}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: pdb.Generation,
		DisruptionsAllowed: allowed,
		CurrentHealthy:     1 + allowed,
		DesiredHealthy:     1,
		ExpectedPods:       1,
	}
	if allowed == 0 {
		// Fewer healthy than desired, so even a not-Ready pod (there is no kubelet to make it
		// Ready) is protected.
		pdb.Status.CurrentHealthy = 0
	}
	if err := k8sClient.Status().Update(ctx, pdb); err != nil {
		t.Fatal(err)
	}
}

func waitNodeEvent(t *testing.T, ctx context.Context, node, reason, contains string) {
	t.Helper()
	waitEvent(t, ctx, "node", node, reason, contains)
}

// waitEvent waits for an event of reason, mentioning contains, on the object named name.
func waitEvent(t *testing.T, ctx context.Context, kind, name, reason, contains string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var events corev1.EventList
		if err := k8sClient.List(ctx, &events, client.MatchingFields{"involvedObject.name": name}); err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			if e.Reason == reason && strings.Contains(e.Message, contains) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event mentioning %q on %s %s: %+v", reason, contains, kind, name, events.Items)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// budgetedPod creates, in a new namespace ns, a Running pod app+"-0" on node and the
// PodDisruptionBudget app+"-pdb" of it allowing no disruption: every eviction of it is refused
// until setBudget allows one.
func budgetedPod(t *testing.T, ctx context.Context, ns, app, node string) (*corev1.Pod, *policyv1.PodDisruptionBudget) {
	t.Helper()
	mustCreate(t, ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	mustCreate(t, ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: app + "-0", Namespace: ns, Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			TerminationGracePeriodSeconds: ptrTo(int64(0)),
			Containers:                    []corev1.Container{{Name: app, Image: "example.com/" + app + ":1"}},
		},
	}
	mustCreate(t, ctx, pod)
	// Evictions ignore budgets for Pending pods, and only a kubelet would make it Running.
	pod.Status.Phase = corev1.PodRunning
	if err := k8sClient.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: app + "-pdb", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptrTo(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		},
	}
	mustCreate(t, ctx, pdb)
	setBudget(t, ctx, pdb, 0)
	return pod, pdb
}
