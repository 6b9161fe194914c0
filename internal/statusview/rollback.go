package statusview

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/poolcondition"
)

// RolledBack is the line `mco rollout status` prints for a pool a rollback holds on an earlier
// config (its RolledBack condition, True), naming the render rolled back and how to move on;
// "" when none holds it.
func RolledBack(pool *mcfgv1.MachineConfigPool) string {
	c := poolcondition.Get(&pool.Status, poolcondition.RolledBack)
	if c == nil || c.Status != corev1.ConditionTrue {
		return ""
	}
	return "RolledBack: " + c.Message
}
