package eviction

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Disposition is what a drain does with one pod on its node.
type Disposition int

const (
	// Stays: the drain leaves the pod on the node. A mirror pod (the kubelet runs it from a
	// file, deleting it changes nothing), or a running pod of a DaemonSet that exists (its
	// controller would put it right back).
	Stays Disposition = iota
	// Evict: the drain asks the API server to evict the pod and waits until it is gone. Every
	// other pod: unmanaged ones too (the node is about to change under them), emptyDir data goes
	// with its pod, and finished pods (the API server deletes them at once).
	Evict
	// Terminating: the pod is already being deleted; the drain waits for it to go without
	// asking again.
	Terminating
)

// Of is what a drain does with pod. daemonSetGone says that the DaemonSet DaemonSet(pod) names
// no longer exists: its orphaned pod is evicted like any other. A caller that did not look
// passes false.
func Of(pod *corev1.Pod, daemonSetGone bool) Disposition {
	switch {
	case DaemonSet(pod) != "" && !daemonSetGone:
		return Stays
	case isMirror(pod):
		return Stays
	case pod.DeletionTimestamp != nil:
		return Terminating
	default:
		return Evict
	}
}

// DaemonSet is the DaemonSet whose existence decides whether a drain evicts pod: the pod's
// controller when that is an apps/v1 DaemonSet and the pod has not finished (a finished pod goes
// whatever controls it); "" otherwise.
func DaemonSet(pod *corev1.Pod) string {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || Finished(pod) {
		return ""
	}
	if apiVersion, kind := appsv1.SchemeGroupVersion.WithKind("DaemonSet").ToAPIVersionAndKind(); ref.APIVersion != apiVersion || ref.Kind != kind {
		return ""
	}
	return ref.Name
}

// Finished is a pod whose containers have all ended for good (phase Succeeded or Failed).
func Finished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func isMirror(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]
	return ok
}
