package eviction

import (
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Covering are the budgets that select pod, matched as the API server matches them for an
// eviction: a budget of the pod's namespace whose selector matches the pod's labels. An empty
// selector ({}) selects every pod of the namespace (policy/v1), a missing or invalid one none.
func Covering(pod *corev1.Pod, budgets []policyv1.PodDisruptionBudget) []policyv1.PodDisruptionBudget {
	var covering []policyv1.PodDisruptionBudget
	for _, b := range budgets {
		if b.Namespace != pod.Namespace {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil || !selector.Matches(labels.Set(pod.Labels)) {
			continue
		}
		covering = append(covering, b)
	}
	return covering
}

// Reason is why the API server refuses to evict a pod.
type Reason string

const (
	// NoDisruptionAllowed: the budget's status.disruptionsAllowed is 0: evicting the pod would
	// leave fewer healthy pods than the budget asks for.
	NoDisruptionAllowed Reason = "NoDisruptionAllowed"
	// NotObserved: the budget changed and the disruption controller has not yet recomputed what
	// it allows (status.observedGeneration is behind metadata.generation).
	NotObserved Reason = "NotObserved"
	// SeveralBudgets: more than one budget selects the pod, which the eviction subresource
	// refuses whatever the budgets allow.
	SeveralBudgets Reason = "SeveralBudgets"
)

// Refusal is why the API server would refuse, now, to evict a pod.
type Refusal struct {
	Reason Reason
	// Budgets are the budgets selecting the pod: the one refusing it, or all of them.
	Budgets []policyv1.PodDisruptionBudget
}

// Refused says whether the API server would refuse to evict pod now, from the budgets of its
// namespace, as the eviction subresource decides: a pod that is not running (pending,
// finished) or already terminating is deleted whatever its budgets say; an unready pod is
// evicted when its budget's unhealthyPodEvictionPolicy is AlwaysAllow, or when the budget has
// the healthy pods it wants without it; otherwise the budget must allow a disruption.
func Refused(pod *corev1.Pod, budgets []policyv1.PodDisruptionBudget) (Refusal, bool) {
	if pod.DeletionTimestamp != nil || Finished(pod) || pod.Status.Phase == corev1.PodPending {
		return Refusal{}, false
	}
	covering := Covering(pod, budgets)
	switch {
	case len(covering) == 0:
		return Refusal{}, false
	case len(covering) > 1:
		return Refusal{Reason: SeveralBudgets, Budgets: covering}, true
	}
	b := covering[0]
	if !ready(pod) {
		if b.Spec.UnhealthyPodEvictionPolicy != nil && *b.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow {
			return Refusal{}, false
		}
		if b.Status.CurrentHealthy >= b.Status.DesiredHealthy && b.Status.DesiredHealthy > 0 {
			return Refusal{}, false
		}
	}
	switch {
	case b.Status.ObservedGeneration < b.Generation:
		return Refusal{Reason: NotObserved, Budgets: covering}, true
	case b.Status.DisruptionsAllowed <= 0:
		return Refusal{Reason: NoDisruptionAllowed, Budgets: covering}, true
	}
	return Refusal{}, false
}

// ready is the API server's health test for a budget: the pod's Ready condition is True.
func ready(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
