package render

import (
	"sync"
	"time"
)

// `kubectl apply -f dir/` creates its MachineConfigs one by one, a few milliseconds apart.
// Rendering after each one would point the pool at a partial config, and the node controller
// would start a node on it at once: that node is drained and rebooted for the partial config,
// then again for the whole. So the controller renders a pool once its inputs (MachineConfigs,
// including the generated ones, KubeletConfigs and ContainerRuntimeConfigs) have been quiet for
// a short window, and never later than a bound after the first change of the burst, so a
// constant stream of changes cannot starve the pool. OpenShift instead delays every render by a
// fixed 5 s.

// Default settle window of `mco controller` (--render-settle, --render-settle-max).
const (
	DefaultSettleQuiet = time.Second
	DefaultSettleMax   = 5 * time.Second
)

// Settle is how long a pool's inputs must be quiet before it is rendered.
type Settle struct {
	// Quiet is how long after the last change of a burst the pool is rendered; 0 renders at once.
	Quiet time.Duration
	// Max bounds the wait from the first change of a burst.
	Max time.Duration
}

// burst is the span of input changes a pool has not been rendered for yet.
type burst struct {
	first, last time.Time
}

// Wait is how much longer to wait before rendering after burst b, at now: 0 renders now.
func (s Settle) Wait(b burst, now time.Time) time.Duration {
	if s.Quiet <= 0 || b.first.IsZero() {
		return 0
	}
	at := b.last.Add(s.Quiet)
	if deadline := b.first.Add(s.Max); deadline.Before(at) {
		at = deadline
	}
	if !now.Before(at) {
		return 0
	}
	return at.Sub(now)
}

// burstClock remembers, per pool, the burst of input changes since its last render. It lives
// in memory only: a restarted controller has forgotten every burst, which only renders sooner.
type burstClock struct {
	mu     sync.Mutex
	byPool map[string]burst
}

// changed records an input change of pool at time at.
func (c *burstClock) changed(pool string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byPool == nil {
		c.byPool = map[string]burst{}
	}
	b := c.byPool[pool]
	if b.first.IsZero() {
		b.first = at
	}
	if at.After(b.last) {
		b.last = at
	}
	c.byPool[pool] = b
}

// wait is how much longer pool's current burst holds its render under s.
func (c *burstClock) wait(pool string, s Settle, now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return s.Wait(c.byPool[pool], now)
}

// rendering forgets the changes of pool up to the moment a render started reading its inputs.
// A change after that moment may have been missed by the render: it starts a new burst, dated
// from that moment, so the bound is never later than it should be.
func (c *burstClock) rendering(pool string, startedAt time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.byPool[pool]
	if !ok {
		return
	}
	if !b.last.After(startedAt) {
		delete(c.byPool, pool)
		return
	}
	c.byPool[pool] = burst{first: startedAt, last: b.last}
}

// forget drops a deleted pool's burst.
func (c *burstClock) forget(pool string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byPool, pool)
}
