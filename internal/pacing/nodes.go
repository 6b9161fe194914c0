package pacing

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// NodeStates reads where each pool node stands against target: Updated once its agent reports
// it Done on target, Updating once pointed at target, Pending otherwise. unreadyPods are the
// nodes' DaemonSet pods that are not Ready (UnreadyDaemonSetPods), by node name; the caller
// may fill them later for the nodes whose gate counts.
func NodeStates(nodes []*corev1.Node, target string, unreadyPods map[string][]string) []NodeState {
	out := make([]NodeState, 0, len(nodes))
	for _, n := range nodes {
		s := NodeState{Name: n.Name, Progress: Pending, UnreadyDaemonSetPods: unreadyPods[n.Name]}
		switch {
		case n.Annotations[protocol.CurrentConfigAnnotation] == target && rollout.Done(n):
			s.Progress = Updated
		case n.Annotations[protocol.DesiredConfigAnnotation] == target:
			s.Progress = Updating
		}
		if !rollout.Healthy(n) {
			s.NotReady = true
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
					s.NotReadySince = c.LastTransitionTime.Time
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// DaemonSetPodLabel is the label the DaemonSet controller puts on every pod it creates; the
// controller's pod cache selects on it, so only DaemonSet pods are cached.
const DaemonSetPodLabel = "pod-template-generation"

// UnreadyDaemonSetPods lists, by node, the DaemonSet pods (owned by a DaemonSet) that should
// be running and are not Ready, as namespace/name, sorted. Finished or deleted pods are no
// one's business: the DaemonSet replaces them.
func UnreadyDaemonSetPods(pods []corev1.Pod) map[string][]string {
	out := map[string][]string{}
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || !ownedByDaemonSet(p) ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || PodReady(p) {
			continue
		}
		out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p.Namespace+"/"+p.Name)
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out
}

// PodReady reports the pod's Ready condition.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func ownedByDaemonSet(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" && o.Controller != nil && *o.Controller {
			return true
		}
	}
	return false
}
