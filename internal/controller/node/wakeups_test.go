package node

import (
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A Node event wakes a pool at once after a quiet spell, and otherwise at the end of the
// spacing its last decision's size sets, at most maxWakeSpacing.
func TestWakeDelay(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		last  time.Time
		nodes int
		now   time.Time
		want  time.Duration
	}{
		{"no decision yet", time.Time{}, 5000, t0, 0},
		{"5,000 nodes, just decided", t0, 5000, t0.Add(100 * time.Millisecond), 2*time.Second - 100*time.Millisecond},
		{"5,000 nodes, spacing over", t0, 5000, t0.Add(2 * time.Second), 0},
		{"5,000 nodes, long quiet", t0, 5000, t0.Add(time.Minute), 0},
		{"10 nodes, just decided", t0, 10, t0.Add(time.Millisecond), 3 * time.Millisecond},
		{"100,000 nodes", t0, 100000, t0, maxWakeSpacing},
	}
	for _, tc := range cases {
		if got := wakeDelay(tc.last, tc.nodes, tc.now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// wakeQueue records how each pool was enqueued.
type wakeQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	now   []string
	after map[string]time.Duration
}

func (q *wakeQueue) Add(r reconcile.Request) { q.now = append(q.now, r.Name) }
func (q *wakeQueue) AddAfter(r reconcile.Request, d time.Duration) {
	if q.after == nil {
		q.after = map[string]time.Duration{}
	}
	q.after[r.Name] = d
}

// The events that come while a decision's spacing runs all ask for the same moment, its end;
// an event for a pool not decided yet, or decided long ago, is decided at once.
func TestDecisionsWake(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var d decisions
	d.begin("big", t0)
	d.read("big", 5000)
	d.begin("small", t0.Add(-time.Minute))
	d.read("small", 5000)
	q := &wakeQueue{}
	d.wake(q, "big", t0.Add(500*time.Millisecond))
	first := q.after["big"]
	d.wake(q, "big", t0.Add(1500*time.Millisecond))
	d.wake(q, "small", t0)
	d.wake(q, "new", t0)
	if first != 1500*time.Millisecond || q.after["big"] != 500*time.Millisecond {
		t.Errorf("big woken after %v then %v, want 1.5s then 0.5s (both at the spacing's end)", first, q.after["big"])
	}
	if len(q.now) != 2 || q.now[0] != "small" || q.now[1] != "new" {
		t.Errorf("woken at once: %v, want [small new]", q.now)
	}
	// A decision that began reads as many Nodes as the one before until it says otherwise.
	d.begin("big", t0.Add(2*time.Second))
	q = &wakeQueue{}
	d.wake(q, "big", t0.Add(2*time.Second))
	if q.after["big"] != 2*time.Second {
		t.Errorf("after a new decision began: %v, want 2s", q.after["big"])
	}
	d.forget("big")
	d.wake(q, "big", t0.Add(2*time.Second))
	if len(q.now) != 1 {
		t.Errorf("a forgotten pool waits: %v", q.after)
	}
}
