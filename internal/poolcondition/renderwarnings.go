package poolcondition

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RenderWarnings is the condition type mco adds for what Ignition only warns about in the
// MachineConfigs of a pool's target: the pool rendered, the keys named were ignored (or read as
// the field they spell in another case), as OpenShift's render does. Never part of Degraded.
const RenderWarnings mcfgv1.MachineConfigPoolConditionType = "RenderWarnings"

// Reasons of the RenderWarnings condition.
const (
	ReasonIgnitionWarnings = "IgnitionWarnings"
	ReasonNoWarnings       = "NoWarnings"
)

// SetRenderWarnings records summary (render.SummarizeWarnings of the target's render): True
// with it as the message, or, with none, False once the pool has had warnings (so their end is
// dated) and nothing for a pool that never had any. It reports whether anything changed.
func SetRenderWarnings(status *mcfgv1.MachineConfigPoolStatus, summary string, now metav1.Time) bool {
	if summary != "" {
		return Set(status, RenderWarnings, corev1.ConditionTrue, ReasonIgnitionWarnings, summary, now)
	}
	if Get(status, RenderWarnings) == nil {
		return false
	}
	return Set(status, RenderWarnings, corev1.ConditionFalse, ReasonNoWarnings, "", now)
}
