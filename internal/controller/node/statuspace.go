package node

import (
	"sync"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// countsInterval is how often a pool's status is written while only its machine counts change.
// In a large rollout nearly every reconcile moves a count (one more node updated), and a write
// per reconcile cost a 1,000-node rollout some 190 pool writes (bench/rollout) for counts that
// no decision reads back. OpenShift's node controller syncs a pool at most every 5 s
// (updateDelay), so its counts move no more often.
const countsInterval = time.Second

// statusWrite decides whether the pool status the decision computed (want, from have) is
// written now. A change to anything but the machine counts (a condition such as Updated or
// NodeDegraded, the configuration, the observed generation) always is; counts alone once
// countsInterval has passed since this controller last wrote the pool's status (sinceLast),
// else after wait, when the reconcile is requeued.
func statusWrite(have, want *mcfgv1.MachineConfigPoolStatus, sinceLast time.Duration) (now bool, wait time.Duration) {
	if equality.Semantic.DeepEqual(have, want) {
		return false, 0
	}
	if !equality.Semantic.DeepEqual(withoutCounts(have), withoutCounts(want)) || sinceLast >= countsInterval {
		return true, 0
	}
	return false, countsInterval - sinceLast
}

func withoutCounts(s *mcfgv1.MachineConfigPoolStatus) *mcfgv1.MachineConfigPoolStatus {
	c := s.DeepCopy()
	c.MachineCount, c.UpdatedMachineCount, c.ReadyMachineCount, c.UnavailableMachineCount, c.DegradedMachineCount = 0, 0, 0, 0, 0
	return c
}

// statusWrites remembers when the decision that last wrote each pool's status began. Timed from
// the decision's start rather than the write's end, the interval lines up with the spacing of
// the decisions Node events wake (decisions.wake): at 5,000 nodes, spaced 1 s apart, each
// decision writes the counts it found, where timing from the write's end found the interval
// short by the decision's own duration and requeued the pool for a second decision, only to
// write the counts.
type statusWrites struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// since is the time since pool's status was last written; a long time when never.
func (s *statusWrites) since(pool string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.last[pool]
	if !ok {
		return countsInterval
	}
	return time.Since(t)
}

// wrote records a write of pool's status by the decision that began at began.
func (s *statusWrites) wrote(pool string, began time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[string]time.Time{}
	}
	s.last[pool] = began
}

func (s *statusWrites) forget(pool string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.last, pool)
}
