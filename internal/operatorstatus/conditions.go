package operatorstatus

import (
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func findCondition(conditions []configv1.ClusterOperatorStatusCondition, t configv1.ClusterStatusConditionType) *configv1.ClusterOperatorStatusCondition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}

// setCondition adds c or updates the condition of its type in place (keeping its position).
// The transition time moves only when the status flips, so "Degraded since" means what it says
// and a status that did not change compares equal to the one written.
func setCondition(conditions *[]configv1.ClusterOperatorStatusCondition, c configv1.ClusterOperatorStatusCondition, now metav1.Time) {
	old := findCondition(*conditions, c.Type)
	if old == nil {
		c.LastTransitionTime = now
		*conditions = append(*conditions, c)
		return
	}
	c.LastTransitionTime = old.LastTransitionTime
	if old.Status != c.Status {
		c.LastTransitionTime = now
	}
	*old = c
}
