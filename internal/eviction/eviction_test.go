package eviction

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func pod(edits ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", Labels: map[string]string{"app": "web"}}}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	for _, e := range edits {
		e(p)
	}
	return p
}

func controlledBy(gvk, name string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		ref := metav1.OwnerReference{Name: name, Controller: ptr(true)}
		switch gvk {
		case "DaemonSet":
			ref.APIVersion, ref.Kind = appsv1.SchemeGroupVersion.String(), "DaemonSet"
		case "extensions DaemonSet":
			ref.APIVersion, ref.Kind = "extensions/v1beta1", "DaemonSet"
		case "Job":
			ref.APIVersion, ref.Kind = batchv1.SchemeGroupVersion.String(), "Job"
		}
		p.OwnerReferences = append(p.OwnerReferences, ref)
	}
}

func phase(ph corev1.PodPhase) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Status.Phase = ph } }

func deleting(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }

func mirror(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "abc"} }

func unready(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }

func ptr[T any](v T) *T { return &v }

// The drain controller's filter is kubectl's with --force --ignore-daemonsets
// --delete-emptydir-data, as OpenShift runs it.
func TestOf(t *testing.T) {
	for _, tc := range []struct {
		name          string
		pod           *corev1.Pod
		daemonSetGone bool
		want          Disposition
		daemonSet     string
	}{
		{"a Deployment's pod", pod(), false, Evict, ""},
		{"an unmanaged pod (--force)", pod(func(p *corev1.Pod) { p.OwnerReferences = nil }), false, Evict, ""},
		{"a pod with emptyDir data", pod(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}), false, Evict, ""},
		{"a DaemonSet's pod", pod(controlledBy("DaemonSet", "agent")), false, Stays, "agent"},
		{"a terminating DaemonSet pod stays too", pod(controlledBy("DaemonSet", "agent"), deleting), false, Stays, "agent"},
		{"an orphaned DaemonSet pod (--force)", pod(controlledBy("DaemonSet", "agent")), true, Evict, "agent"},
		{"a finished DaemonSet pod", pod(controlledBy("DaemonSet", "agent"), phase(corev1.PodSucceeded)), false, Evict, ""},
		{"a failed DaemonSet pod", pod(controlledBy("DaemonSet", "agent"), phase(corev1.PodFailed)), false, Evict, ""},
		{"an old API group's DaemonSet is not apps/v1", pod(controlledBy("extensions DaemonSet", "agent")), false, Evict, ""},
		{"a Job's pod", pod(controlledBy("Job", "batch")), false, Evict, ""},
		{"a mirror pod", pod(mirror), false, Stays, ""},
		{"a terminating mirror pod", pod(mirror, deleting), false, Stays, ""},
		{"a terminating pod is not asked again", pod(deleting), false, Terminating, ""},
		{"a finished pod", pod(phase(corev1.PodSucceeded)), false, Evict, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Of(tc.pod, tc.daemonSetGone); got != tc.want {
				t.Errorf("Of = %v, want %v", got, tc.want)
			}
			if got := DaemonSet(tc.pod); got != tc.daemonSet {
				t.Errorf("DaemonSet = %q, want %q", got, tc.daemonSet)
			}
		})
	}
}

func budget(name string, selector *metav1.LabelSelector, edits ...func(*policyv1.PodDisruptionBudget)) policyv1.PodDisruptionBudget {
	b := policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Generation: 1}}
	b.Spec.Selector = selector
	b.Spec.MinAvailable = ptr(intstr.FromInt32(2))
	b.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 0, CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 2}
	for _, e := range edits {
		e(&b)
	}
	return b
}

func web() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
}

func allows(n int32) func(*policyv1.PodDisruptionBudget) {
	return func(b *policyv1.PodDisruptionBudget) { b.Status.DisruptionsAllowed, b.Status.CurrentHealthy = n, 2+n }
}

func names(budgets []policyv1.PodDisruptionBudget) []string {
	var out []string
	for _, b := range budgets {
		out = append(out, b.Namespace+"/"+b.Name)
	}
	return out
}

func TestCovering(t *testing.T) {
	other := func(b *policyv1.PodDisruptionBudget) { b.Namespace = "other" }
	budgets := []policyv1.PodDisruptionBudget{
		budget("web", web()),
		budget("everything", &metav1.LabelSelector{}),
		budget("no-selector", nil),
		budget("db", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}),
		budget("other-web", web(), other),
		budget("expression", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}}}}),
		budget("invalid", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}),
	}
	got := names(Covering(pod(), budgets))
	if want := []string{"shop/web", "shop/everything", "shop/expression"}; !slices.Equal(got, want) {
		t.Errorf("Covering = %v, want %v", got, want)
	}
}

// The API server's eviction subresource decides so (pkg/registry/core/pod/storage/eviction.go).
func TestRefused(t *testing.T) {
	alwaysAllow := func(b *policyv1.PodDisruptionBudget) {
		b.Spec.UnhealthyPodEvictionPolicy = ptr(policyv1.AlwaysAllow)
	}
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		budgets []policyv1.PodDisruptionBudget
		want    Reason // "" for no refusal
		names   []string
	}{
		{"no budget", pod(), nil, "", nil},
		{"a budget of another app", pod(), []policyv1.PodDisruptionBudget{budget("db", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}})}, "", nil},
		{"the budget allows no disruption", pod(), []policyv1.PodDisruptionBudget{budget("web", web())}, NoDisruptionAllowed, []string{"shop/web"}},
		{"the budget allows one", pod(), []policyv1.PodDisruptionBudget{budget("web", web(), allows(1))}, "", nil},
		{"a negative allowance refuses too", pod(), []policyv1.PodDisruptionBudget{budget("web", web(), allows(-1))}, NoDisruptionAllowed, []string{"shop/web"}},
		{"the budget changed and is not recomputed yet", pod(), []policyv1.PodDisruptionBudget{budget("web", web(), allows(1), func(b *policyv1.PodDisruptionBudget) { b.Generation = 2 })}, NotObserved, []string{"shop/web"}},
		{"two budgets select it", pod(), []policyv1.PodDisruptionBudget{budget("web", web(), allows(1)), budget("all", &metav1.LabelSelector{}, allows(1))}, SeveralBudgets, []string{"shop/web", "shop/all"}},
		{"a pending pod ignores budgets", pod(phase(corev1.PodPending)), []policyv1.PodDisruptionBudget{budget("web", web())}, "", nil},
		{"a finished pod ignores budgets", pod(phase(corev1.PodSucceeded)), []policyv1.PodDisruptionBudget{budget("web", web())}, "", nil},
		{"a terminating pod ignores budgets", pod(deleting), []policyv1.PodDisruptionBudget{budget("web", web())}, "", nil},
		{"an unready pod under AlwaysAllow", pod(unready), []policyv1.PodDisruptionBudget{budget("web", web(), alwaysAllow)}, "", nil},
		{"an unready pod of a budget with its healthy pods", pod(unready), []policyv1.PodDisruptionBudget{budget("web", web())}, "", nil},
		{"an unready pod of a budget short of healthy pods", pod(unready), []policyv1.PodDisruptionBudget{budget("web", web(), func(b *policyv1.PodDisruptionBudget) { b.Status.CurrentHealthy = 1 })}, NoDisruptionAllowed, []string{"shop/web"}},
		{"a ready pod under AlwaysAllow", pod(), []policyv1.PodDisruptionBudget{budget("web", web(), alwaysAllow)}, NoDisruptionAllowed, []string{"shop/web"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, refused := Refused(tc.pod, tc.budgets)
			if refused != (tc.want != "") || r.Reason != tc.want || !slices.Equal(names(r.Budgets), tc.names) {
				t.Errorf("Refused = %+v %v, want %q %v", r.Reason, names(r.Budgets), tc.want, tc.names)
			}
		})
	}
}
