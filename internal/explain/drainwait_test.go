package explain

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mco-dev/mco/internal/protocol"
)

// The live pods and budgets are what the API server holds while a drain waits: replicas under a
// budget that allows no disruption, DaemonSet and mirror pods the drain leaves, pods terminating
// after their eviction.

// livePod is a Ready, Running pod on node w1.
func livePod(ns, name string, labels map[string]string, edits ...func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: corev1.PodSpec{NodeName: "w1"}}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	for _, e := range edits {
		e(&p)
	}
	return p
}

var webLabels = map[string]string{"app": "web"}

func ofDaemonSet(p *corev1.Pod) {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "DaemonSet", Name: "agent", Controller: ptrTo(true)}}
}

func asMirror(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }

func succeeded(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }

func terminatingSince(ago time.Duration, finalizers ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.DeletionTimestamp = &metav1.Time{Time: now.Add(-ago)}
		p.Finalizers = finalizers
	}
}

// pdb is a budget of ns selecting labels: minAvailable 2 with 2 of 2 healthy allows no disruption.
func pdb(ns, name string, labels map[string]string, allowed int32) policyv1.PodDisruptionBudget {
	b := policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1}}
	b.Spec.MinAvailable = ptrTo(intstr.FromInt32(2))
	b.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	b.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: allowed, CurrentHealthy: 2 + allowed, DesiredHealthy: 2, ExpectedPods: 2 + allowed}
	return b
}

func ptrTo[T any](v T) *T { return &v }

func TestDrainWaits(t *testing.T) {
	pods := []corev1.Pod{
		livePod("default", "web-b", webLabels),
		livePod("default", "agent-x", webLabels, ofDaemonSet),
		livePod("kube-system", "etcd-w1", nil, asMirror),
		livePod("default", "job-1", webLabels, succeeded),
		livePod("default", "cache-0", map[string]string{"app": "cache"}, terminatingSince(time.Minute)),
		livePod("default", "api-0", map[string]string{"app": "api"}),
		livePod("default", "web-a", webLabels),
		livePod("other", "web-0", webLabels),
	}
	budgets := []policyv1.PodDisruptionBudget{pdb("default", "web", webLabels, 0), pdb("default", "api", map[string]string{"app": "api"}, 1)}
	var got []string
	for _, w := range drainWaits(pods, budgets) {
		got = append(got, fmt.Sprintf("%s refused=%v %v", w.key(), w.refused, w.budgets()))
	}
	want := []string{
		// Refused first: budget default/web allows no disruption; it does not cover namespace other.
		"default/web-a refused=true [default/web]",
		"default/web-b refused=true [default/web]",
		// Then terminating, then the rest; default/api allows one. DaemonSet, mirror and
		// finished pods are not waited for.
		"default/cache-0 refused=false []",
		"default/api-0 refused=false []",
		"other/web-0 refused=false []",
	}
	if !slices.Equal(got, want) {
		t.Errorf("drainWaits:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// drainingNode is w1 draining for newConfig since 3m, with more annotations.
func drainingNode(more ...string) corev1.Node {
	n := workerNode("w1", oldConfig, newConfig, append([]string{protocol.StateAnnotation, "Working",
		protocol.DesiredDrainAnnotation, "drain-" + newConfig,
		protocol.DrainStartedAtAnnotation, now.Add(-3 * time.Minute).Format(time.RFC3339)}, more...)...)
	n.Spec.Unschedulable = true
	return n
}

func TestDrainNamesWhatItWaitsFor(t *testing.T) {
	web := func(name string) corev1.Pod { return livePod("default", name, webLabels) }
	noDisruption := []policyv1.PodDisruptionBudget{pdb("default", "web", webLabels, 0)}
	for _, tc := range []struct {
		name  string
		node  corev1.Node
		pods  *NodePods
		want  want
		not   []string // no field says these
		lines map[string]int
	}{{
		name: "before the threshold, the live budget and pod",
		node: drainingNode(),
		pods: &NodePods{Pods: []corev1.Pod{web("web-abc"), livePod("default", "agent-x", nil, ofDaemonSet)}, Budgets: noDisruption},
		want: want{
			summary:  []string{"draining for rendered-worker-new in mcp/worker: held by PodDisruptionBudget default/web"},
			why:      []string{"pod default/web-abc is still on the node; PodDisruptionBudget default/web allows no disruption (minAvailable 2, 2 healthy)"},
			next:     []string{"--drain-blocked-threshold", "also reports the drain as DrainBlocked"},
			youCan:   []string{"`kubectl get pdb -n default web -o wide`", "`kubectl delete pod -n default web-abc`"},
			evidence: []string{"pods on node/w1 now: 2, of which the drain leaves 1 (DaemonSet and mirror pods)", "pdb default/web status: disruptionsAllowed 0, currentHealthy 2, desiredHealthy 2, expectedPods 2"},
		},
		not: []string{"agent-x"},
	}, {
		name: "a budget that allows a disruption holds nothing",
		node: drainingNode(),
		pods: &NodePods{Pods: []corev1.Pod{web("web-abc")}, Budgets: []policyv1.PodDisruptionBudget{pdb("default", "web", webLabels, 1)}},
		want: want{
			why:    []string{"pod default/web-abc is still on the node; nothing refuses its eviction now"},
			youCan: []string{"`kubectl get pods -A --field-selector spec.nodeName=w1`"},
		},
		not: []string{"held by", "allows no disruption", "kubectl delete pod"},
	}, {
		name: "maxUnavailable and fewer healthy pods than expected",
		node: drainingNode(),
		pods: &NodePods{Pods: []corev1.Pod{web("web-abc")}, Budgets: []policyv1.PodDisruptionBudget{func() policyv1.PodDisruptionBudget {
			b := pdb("default", "web", webLabels, 0)
			b.Spec.MinAvailable, b.Spec.MaxUnavailable = nil, ptrTo(intstr.FromString("25%"))
			b.Status.CurrentHealthy, b.Status.DesiredHealthy, b.Status.ExpectedPods = 3, 3, 4
			return b
		}()}},
		want: want{why: []string{"PodDisruptionBudget default/web allows no disruption (maxUnavailable 25%, 3 of 4 healthy)"}},
	}, {
		name: "two budgets select the pod",
		node: drainingNode(),
		pods: &NodePods{Pods: []corev1.Pod{web("web-abc")}, Budgets: []policyv1.PodDisruptionBudget{pdb("default", "web", webLabels, 1), pdb("default", "all", nil, 1)}},
		want: want{
			summary: []string{"held by PodDisruptionBudgets default/web, default/all"},
			why:     []string{"pod default/web-abc is still on the node; PodDisruptionBudgets default/web, default/all all select it, and the API server evicts no pod that more than one budget selects"},
			youCan:  []string{"let at most one PodDisruptionBudget select pod default/web-abc (now default/web, default/all): `kubectl get pdb -n default`", "`kubectl delete pod -n default web-abc`"},
		},
		not: []string{"see why PodDisruptionBudget"},
	}, {
		name: "a pod stuck terminating",
		node: drainingNode(),
		pods: &NodePods{Pods: []corev1.Pod{livePod("default", "db-0", nil, terminatingSince(4*time.Minute, "example.com/backup"))}},
		want: want{why: []string{"pod default/db-0 is terminating (its grace period ended 4m ago); finalizers: example.com/backup"}},
	}, {
		name: "nothing left to evict",
		node: drainingNode(),
		pods: &NodePods{Pods: []corev1.Pod{livePod("default", "agent-x", nil, ofDaemonSet), livePod("default", "job-1", nil, succeeded)}},
		want: want{why: []string{"no pod the drain evicts is left on the node"}},
		not:  []string{"kubectl get pods"},
	}, {
		name: "pods not readable",
		node: drainingNode(),
		pods: &NodePods{Unread: `pods is forbidden: User "dev" cannot list resource "pods"`},
		want: want{summary: []string{"draining for rendered-worker-new in mcp/worker"}, evidence: []string{`pods on node/w1 not read: pods is forbidden`}},
		not:  []string{"no pod the drain evicts", "held by"},
	}, {
		name: "no live pods read (a diagnose bundle) says what it said before",
		node: drainingNode(),
		want: want{summary: []string{"draining for rendered-worker-new"}, next: []string{"--drain-blocked-threshold"}},
		not:  []string{"pods on node", "no pod the drain evicts", "still on the node"},
	}, {
		name: "the blocked report and the live pods name each pod and budget once",
		node: drainingNode(protocol.DrainBlockedAnnotation, blockedPDB),
		pods: &NodePods{Pods: []corev1.Pod{livePod("shop", "web-0", webLabels), livePod("shop", "web-1", webLabels)}, Budgets: []policyv1.PodDisruptionBudget{pdb("shop", "web-pdb", webLabels, 0)}},
		want: want{
			summary: []string{"drain blocked for rendered-worker-new in mcp/worker"},
			why: []string{"the drain is blocked: pod shop/web-0 cannot be evicted: PodDisruptionBudget shop/web-pdb",
				"pod shop/web-1 is still on the node; PodDisruptionBudget shop/web-pdb allows no disruption (minAvailable 2, 2 healthy)"},
			youCan: []string{"`kubectl delete pod -n shop web-0`", "`kubectl delete pod -n shop web-1`"},
		},
		not: []string{"pod shop/web-0 is still on the node"},
		lines: map[string]int{
			"kubectl get pdb -n shop web-pdb": 1, "kubectl delete pod -n shop web-0": 1, "kubectl delete pod -n shop web-1": 1,
			"pod shop/web-0": 2, // the report, and its delete advice
		},
	}, {
		name: "named pods are bounded",
		node: drainingNode(),
		pods: &NodePods{Pods: func() []corev1.Pod {
			var pods []corev1.Pod
			for i := range 8 {
				pods = append(pods, web(fmt.Sprintf("web-%d", i)))
			}
			return pods
		}(), Budgets: noDisruption},
		want: want{why: []string{"pod default/web-4 is still on the node", "and 3 more pods still on the node"}},
		not:  []string{"pod default/web-5 is still", "delete pod -n default web-3"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := Cluster{Now: now, Pools: []mcfgv1.MachineConfigPool{workerPool(t, newConfig)}, Nodes: []corev1.Node{tc.node}}
			if tc.pods != nil {
				c.NodePods = *tc.pods
				c.NodePods.Node = tc.node.Name
			}
			x, err := Node(c, tc.node.Name)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.check(t, x)
			all := strings.Join(slices.Concat([]string{x.Summary, x.Doing, x.Next}, x.Why, x.YouCan), "\n")
			for _, n := range tc.not {
				if strings.Contains(all, n) {
					t.Errorf("says %q:\n%s", n, all)
				}
			}
			for phrase, count := range tc.lines {
				lines := slices.Concat(x.Why, x.YouCan)
				if got := len(slices.DeleteFunc(lines, func(l string) bool { return !strings.Contains(l, phrase) })); got != count {
					t.Errorf("%d lines of Why and YouCan say %q, want %d:\n%s", got, phrase, count, strings.Join(slices.Concat(x.Why, x.YouCan), "\n"))
				}
			}
		})
	}
}

// Live pods of another node than the one explained are not what its drain waits for.
func TestDrainIgnoresPodsReadForAnotherNode(t *testing.T) {
	c := Cluster{Now: now, Pools: []mcfgv1.MachineConfigPool{workerPool(t, newConfig)}, Nodes: []corev1.Node{drainingNode()},
		NodePods: NodePods{Node: "w2", Pods: []corev1.Pod{livePod("default", "web-0", webLabels)}, Budgets: []policyv1.PodDisruptionBudget{pdb("default", "web", webLabels, 0)}}}
	x, err := Node(c, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(slices.Concat(x.Why, x.YouCan, x.Evidence), "\n"); strings.Contains(all, "web") {
		t.Errorf("names w2's pods:\n%s", all)
	}
}

func TestDrainRunning(t *testing.T) {
	for _, tc := range []struct {
		annotations []string
		want        bool
	}{
		{nil, false},
		{[]string{protocol.DesiredDrainAnnotation, "drain-" + newConfig}, true},
		{[]string{protocol.DesiredDrainAnnotation, "drain-" + newConfig, protocol.LastAppliedDrainAnnotation, "drain-" + newConfig}, false},
		{[]string{protocol.DesiredDrainAnnotation, "uncordon-" + newConfig, protocol.LastAppliedDrainAnnotation, "drain-" + newConfig}, false},
		{[]string{protocol.DesiredDrainAnnotation, "drain-" + newConfig, protocol.LastAppliedDrainAnnotation, "uncordon-" + oldConfig}, true},
	} {
		n := workerNode("w1", oldConfig, newConfig, tc.annotations...)
		if got := drainRunning(&n); got != tc.want {
			t.Errorf("drainRunning(%v) = %v, want %v", tc.annotations, got, tc.want)
		}
	}
}
