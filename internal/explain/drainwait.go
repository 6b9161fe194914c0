package explain

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/mco-dev/mco/internal/eviction"
	"github.com/mco-dev/mco/internal/protocol"
)

// NodePods are the pods on one node and the PodDisruptionBudgets of their namespaces: what a
// running drain of that node waits for, read from the live cluster.
type NodePods struct {
	// Node is the node the pods are on; "" when nothing was read.
	Node    string
	Pods    []corev1.Pod
	Budgets []policyv1.PodDisruptionBudget
	// Unread says why they could not be read (the caller may not list pods or budgets): the
	// explanation then says so instead of naming what the drain waits for.
	Unread string
}

// maxDrainPods bounds the pods a drain explanation names, as the drain controller's report does.
const maxDrainPods = 5

// drainRunning is a drain the agent asked for and the drain controller has not acknowledged:
// only then are the node's pods worth reading.
func drainRunning(n *corev1.Node) bool {
	wanted := n.Annotations[protocol.DesiredDrainAnnotation]
	return strings.HasPrefix(wanted, protocol.DrainRequest("")) && wanted != n.Annotations[protocol.LastAppliedDrainAnnotation]
}

// drainWait is one pod a running drain still waits for.
type drainWait struct {
	pod     *corev1.Pod
	refusal eviction.Refusal
	refused bool
}

// drainWaits decides which pods on a draining node still hold its drain: those eviction.Of does
// not leave on the node, by the drain controller's own rule (a DaemonSet's pod is taken to have
// its DaemonSet: explain does not look it up), except finished ones, which the next eviction
// pass deletes whatever their budgets say. Each comes with the PodDisruptionBudgets refusing its
// eviction now (eviction.Refused, as the API server decides). Refused pods first, then the
// terminating ones, then the rest, each by namespace/name.
func drainWaits(pods []corev1.Pod, budgets []policyv1.PodDisruptionBudget) []drainWait {
	var waits []drainWait
	for i := range pods {
		p := &pods[i]
		if eviction.Of(p, false) == eviction.Stays || eviction.Finished(p) {
			continue
		}
		r, refused := eviction.Refused(p, budgets)
		waits = append(waits, drainWait{pod: p, refusal: r, refused: refused})
	}
	rank := func(w drainWait) int {
		switch {
		case w.refused:
			return 0
		case w.pod.DeletionTimestamp != nil:
			return 1
		}
		return 2
	}
	slices.SortFunc(waits, func(a, b drainWait) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a.key(), b.key()))
	})
	return waits
}

// key is the pod as the drain controller's report names it: namespace/name.
func (w drainWait) key() string { return w.pod.Namespace + "/" + w.pod.Name }

// budgets names the budgets refusing the pod.
func (w drainWait) budgets() []string {
	var names []string
	for _, b := range w.refusal.Budgets {
		names = append(names, b.Namespace+"/"+b.Name)
	}
	return names
}

// line says why the drain still waits for the pod, in the words of the drain controller's report.
func (w drainWait) line(now time.Time) string {
	switch {
	case w.refused && w.refusal.Reason == eviction.SeveralBudgets:
		return fmt.Sprintf("pod %s is still on the node; PodDisruptionBudgets %s all select it, and the API server evicts no pod that more than one budget selects", w.key(), strings.Join(w.budgets(), ", "))
	case w.refused && w.refusal.Reason == eviction.NotObserved:
		return fmt.Sprintf("pod %s is still on the node; PodDisruptionBudget %s changed and the disruption controller has not yet recomputed what it allows", w.key(), w.budgets()[0])
	case w.refused:
		return fmt.Sprintf("pod %s is still on the node; PodDisruptionBudget %s allows no disruption (%s)", w.key(), w.budgets()[0], budgetTerms(w.refusal.Budgets[0]))
	case w.pod.DeletionTimestamp != nil:
		s := fmt.Sprintf("pod %s is terminating (its grace period ends in %s)", w.key(), age(w.pod.DeletionTimestamp.Sub(now)))
		if end := w.pod.DeletionTimestamp.Time; !end.After(now) {
			s = fmt.Sprintf("pod %s is terminating (its grace period ended %s ago)", w.key(), age(now.Sub(end)))
		}
		if len(w.pod.Finalizers) > 0 {
			s += "; finalizers: " + strings.Join(w.pod.Finalizers, ", ")
		}
		return s
	default:
		return fmt.Sprintf("pod %s is still on the node; nothing refuses its eviction now", w.key())
	}
}

// budgetTerms is what a budget asks for and what it has: "minAvailable 2, 2 healthy".
func budgetTerms(b policyv1.PodDisruptionBudget) string {
	var terms []string
	switch {
	case b.Spec.MinAvailable != nil:
		terms = append(terms, "minAvailable "+b.Spec.MinAvailable.String())
	case b.Spec.MaxUnavailable != nil:
		terms = append(terms, "maxUnavailable "+b.Spec.MaxUnavailable.String())
	}
	healthy := fmt.Sprintf("%d healthy", b.Status.CurrentHealthy)
	if b.Status.ExpectedPods != b.Status.CurrentHealthy {
		healthy = fmt.Sprintf("%d of %d healthy", b.Status.CurrentHealthy, b.Status.ExpectedPods)
	}
	return strings.Join(append(terms, healthy), ", ")
}

// budgetAdvice and deleteAdvice are what an admin can do about a budget or a pod in a drain's
// way, whether the drain controller's report or the live pods name it.
func budgetAdvice(budget string) string {
	return fmt.Sprintf("see why PodDisruptionBudget %s allows no disruption: `kubectl get pdb %s -o wide`; scale its workload up or relax the budget", budget, kubectlRef(budget))
}

func deleteAdvice(pod string) string {
	return fmt.Sprintf("if losing it is acceptable, delete pod %s yourself: `kubectl delete pod %s`", pod, kubectlRef(pod))
}

func severalBudgetsAdvice(w drainWait) string {
	return fmt.Sprintf("let at most one PodDisruptionBudget select pod %s (now %s): `kubectl get pdb -n %s`", w.key(), strings.Join(w.budgets(), ", "), w.pod.Namespace)
}

// podEvidence is what the live pods and budgets show: how many pods are on the node and how many
// the drain leaves there, and the status of the budgets refusing an eviction (at most 3).
func podEvidence(np NodePods, waits []drainWait) []string {
	if np.Unread != "" {
		return []string{fmt.Sprintf("pods on node/%s not read: %s", np.Node, bound(np.Unread))}
	}
	stay := 0
	for i := range np.Pods {
		if eviction.Of(&np.Pods[i], false) == eviction.Stays {
			stay++
		}
	}
	out := []string{fmt.Sprintf("pods on node/%s now: %d, of which the drain leaves %d (DaemonSet and mirror pods)", np.Node, len(np.Pods), stay)}
	var seen []string
	for _, w := range waits {
		for _, b := range w.refusal.Budgets {
			name := b.Namespace + "/" + b.Name
			if slices.Contains(seen, name) || len(seen) == 3 {
				continue
			}
			seen = append(seen, name)
			out = append(out, fmt.Sprintf("pdb %s status: disruptionsAllowed %d, currentHealthy %d, desiredHealthy %d, expectedPods %d (generation %d, observed %d)",
				name, b.Status.DisruptionsAllowed, b.Status.CurrentHealthy, b.Status.DesiredHealthy, b.Status.ExpectedPods, b.Generation, b.Status.ObservedGeneration))
		}
	}
	return out
}
