package containerruntime

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxConditions bounds the condition list: OpenShift appends one whenever the message changes,
// without limit, so a config flapping between two errors would grow it forever.
const MaxConditions = 10

// Condition is OpenShift's: Success "Success", or Failure "Error: <reason>".
func Condition(err error, now metav1.Time) mcfgv1.ContainerRuntimeConfigCondition {
	if err != nil {
		return mcfgv1.ContainerRuntimeConfigCondition{Type: mcfgv1.ContainerRuntimeConfigFailure, Status: corev1.ConditionTrue, LastTransitionTime: now, Message: "Error: " + err.Error()}
	}
	return mcfgv1.ContainerRuntimeConfigCondition{Type: mcfgv1.ContainerRuntimeConfigSuccess, Status: corev1.ConditionTrue, LastTransitionTime: now, Message: "Success"}
}

// Status returns st after a sync of generation that ended with err (nil: success), as
// OpenShift records it: the generation observed, and the new condition appended unless the
// last one has the same message, which it replaces. ok is false when nothing would change but
// the timestamp, so a resync with the same outcome writes nothing.
func Status(st mcfgv1.ContainerRuntimeConfigStatus, generation int64, err error, now metav1.Time) (mcfgv1.ContainerRuntimeConfigStatus, bool) {
	cond := Condition(err, now)
	n := len(st.Conditions)
	if st.ObservedGeneration == generation && n > 0 && st.Conditions[n-1].Type == cond.Type && st.Conditions[n-1].Message == cond.Message {
		return st, false
	}
	out := *st.DeepCopy()
	out.ObservedGeneration = generation
	if n > 0 && out.Conditions[n-1].Message == cond.Message {
		out.Conditions[n-1] = cond
	} else {
		out.Conditions = append(out.Conditions, cond)
	}
	if len(out.Conditions) > MaxConditions {
		out.Conditions = out.Conditions[len(out.Conditions)-MaxConditions:]
	}
	return out, true
}
