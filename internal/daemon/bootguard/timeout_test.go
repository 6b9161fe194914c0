package bootguard

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

func TestTimeout(t *testing.T) {
	policy := func(name string, timeout time.Duration, pools ...string) rolloutv1.MachineConfigPoolRollout {
		p := rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if timeout > 0 {
			p.Spec.NodeBootTimeout = &metav1.Duration{Duration: timeout}
		}
		for _, pool := range pools {
			p.Status.Pools = append(p.Status.Pools, rolloutv1.PoolRolloutStatus{Name: pool})
		}
		return p
	}
	for _, tc := range []struct {
		name     string
		policies []rolloutv1.MachineConfigPoolRollout
		want     time.Duration
		from     string
	}{
		{"no policy", nil, 10 * time.Minute, "default"},
		{"a policy for another pool", []rolloutv1.MachineConfigPoolRollout{policy("infra", time.Minute, "infra")}, 10 * time.Minute, "default"},
		{"the pool's policy", []rolloutv1.MachineConfigPoolRollout{policy("infra", time.Minute, "infra"), policy("workers", 90*time.Second, "worker", "edge")}, 90 * time.Second, "mcprollout/workers"},
		{"the pool's policy without a timeout", []rolloutv1.MachineConfigPoolRollout{policy("workers", 0, "worker")}, 10 * time.Minute, "default"},
		{"two policies (a conflict)", []rolloutv1.MachineConfigPoolRollout{policy("a", time.Minute, "worker"), policy("b", 2*time.Minute, "worker")}, 10 * time.Minute, "default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, from := Timeout(tc.policies, "worker")
			if got != tc.want || from != tc.from {
				t.Errorf("Timeout = %s from %s, want %s from %s", got, from, tc.want, tc.from)
			}
		})
	}
}
