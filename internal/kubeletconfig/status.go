package kubeletconfig

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxAcceptedConditions is how many Accepted conditions OpenShift keeps: a short history of
// outcomes, oldest first.
const maxAcceptedConditions = 3

// SuccessMessage is the Accepted=True message.
const SuccessMessage = "Success"

// Status returns st after a sync of generation with outcome err (nil: every pool's
// MachineConfig is written), as OpenShift writes it: observedGeneration, the Accepted history
// (the latest last, at most three), then one deprecated Success or Failure condition mirroring
// the latest for older clients.
//
// Unlike OpenShift, a repeated outcome keeps its lastTransitionTime instead of taking now, so
// a sync that changes nothing writes nothing.
func Status(st mcfgv1.KubeletConfigStatus, generation int64, err error, now metav1.Time) mcfgv1.KubeletConfigStatus {
	latest := mcfgv1.KubeletConfigCondition{Type: mcfgv1.KubeletConfigAccepted, Status: corev1.ConditionTrue, Message: SuccessMessage, LastTransitionTime: now}
	if err != nil {
		latest.Status, latest.Message = corev1.ConditionFalse, "Error: "+err.Error()
	}
	var accepted []mcfgv1.KubeletConfigCondition
	for _, c := range st.Conditions {
		if c.Type != mcfgv1.KubeletConfigSuccess && c.Type != mcfgv1.KubeletConfigFailure {
			accepted = append(accepted, c)
		}
	}
	if n := len(accepted); n > 0 && accepted[n-1].Message == latest.Message && accepted[n-1].Status == latest.Status {
		latest = accepted[n-1]
	} else {
		accepted = append(accepted, latest)
	}
	if len(accepted) > maxAcceptedConditions {
		accepted = accepted[len(accepted)-maxAcceptedConditions:]
	}
	legacy := mcfgv1.KubeletConfigCondition{Type: mcfgv1.KubeletConfigSuccess, Status: corev1.ConditionTrue, Message: latest.Message, LastTransitionTime: latest.LastTransitionTime}
	if latest.Status != corev1.ConditionTrue {
		legacy.Type = mcfgv1.KubeletConfigFailure
	}
	return mcfgv1.KubeletConfigStatus{ObservedGeneration: generation, Conditions: append(accepted, legacy)}
}
