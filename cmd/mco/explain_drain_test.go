//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/explain"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/scheme"
)

// A drain short of --drain-blocked-threshold (no drain-blocked report yet) is explained from the
// live pods on the node and their budgets: the replica a budget allowing no disruption keeps
// there, not the DaemonSet's pod the drain leaves, nor a replica on another node. (The API server
// holds what the disruption controller would write in the budget's status; none runs here.)
func TestExplainDrainNamesLivePodsAndBudgets(t *testing.T) {
	e := newExplainCase(t, "x-live")
	ns := e.name
	e.pool(nil)
	e.node("x-live-0", 0, protocol.CurrentConfigAnnotation, e.old(), protocol.DesiredConfigAnnotation, e.target(),
		protocol.StateAnnotation, "Working", protocol.DesiredDrainAnnotation, protocol.DrainRequest(e.target()),
		protocol.DrainStartedAtAnnotation, time.Now().Add(-2*time.Minute).UTC().Format(time.RFC3339))
	e.must(controlPlane.Client.Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	web := map[string]string{"app": "web"}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns}, Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "example.com/a:1"}}}},
	}}
	e.must(controlPlane.Client.Create(e.ctx, ds))
	e.readyPod(ns, "web-0", "x-live-0", web, nil)
	e.readyPod(ns, "web-1", "x-live-elsewhere", web, nil)
	e.readyPod(ns, "agent-x", "x-live-0", map[string]string{"app": "agent"},
		[]metav1.OwnerReference{*metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))})
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: explainPtr(intstr.FromInt32(2)), Selector: &metav1.LabelSelector{MatchLabels: web}}}
	e.must(controlPlane.Client.Create(e.ctx, pdb))
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: 0, CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 2}
	e.must(controlPlane.Client.Status().Update(e.ctx, pdb))

	out := e.explain("node/x-live-0", []string{
		"node/x-live-0: draining for rendered-x-live-new in mcp/x-live: held by PodDisruptionBudget x-live/web",
		"pod x-live/web-0 is still on the node; PodDisruptionBudget x-live/web allows no disruption (minAvailable 2, 2 healthy)",
		"`kubectl get pdb -n x-live web -o wide`", "`kubectl delete pod -n x-live web-0`",
		"pods on node/x-live-0 now: 2, of which the drain leaves 1 (DaemonSet and mirror pods)",
		"pdb x-live/web status: disruptionsAllowed 0",
	})
	for _, not := range []string{"web-1", "pod x-live/agent-x"} {
		if strings.Contains(out, not) {
			t.Errorf("mco explain names %q:\n%s", not, out)
		}
	}

	// Someone who may read mco's objects but not pods still gets the explanation, which says what
	// it could not read.
	const user = "explain-no-pods"
	for _, o := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes", "events"}, Verbs: []string{"list"}},
			{APIGroups: []string{mcfgv1.GroupName}, Resources: []string{"machineconfigpools", "machineconfignodes"}, Verbs: []string{"list"}},
			{APIGroups: []string{rolloutv1.GroupName}, Resources: []string{"machineconfigpoolrollouts"}, Verbs: []string{"list"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}},
	} {
		e.must(controlPlane.Client.Create(e.ctx, o))
	}
	cfg := rest.CopyConfig(controlPlane.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	e.must(err)
	var snap explain.Cluster
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) { // RBAC takes a moment to see a new binding
		if snap, err = explain.Snapshot(e.ctx, c, "x-live-0", 0); err == nil || time.Now().After(deadline) {
			break
		}
	}
	e.must(err)
	x, err := explain.Node(snap, "x-live-0")
	e.must(err)
	evidence := strings.Join(x.Evidence, "\n")
	if !strings.Contains(evidence, "pods on node/x-live-0 not read: ") || !strings.Contains(evidence, "forbidden") || strings.Contains(x.Summary, "held by") {
		t.Errorf("without permission to list pods: summary %q, evidence:\n%s", x.Summary, evidence)
	}
}

// readyPod creates a pod bound to node, Running and Ready as its kubelet would report it.
func (e *explainCase) readyPod(ns, name, node string, labels map[string]string, owners []metav1.OwnerReference) {
	e.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: owners},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "example.com/c:1"}}},
	}
	e.must(controlPlane.Client.Create(e.ctx, p))
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	e.must(controlPlane.Client.Status().Update(e.ctx, p))
}
