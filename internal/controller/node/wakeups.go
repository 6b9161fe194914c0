package node

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// wakeSpacingPerNode spaces the decisions Node events ask of a pool, per Node the last decision
// read. A decision reads every Node of the cluster (membership, the rollout core, the writes),
// and in a large rollout the agents' writes (Working, then Done: three Node events per update
// with the controller's own) woke the pool as fast as it could decide: 500 decisions over
// 5,000 Nodes in a 5,000-node rollout (bench/rollout), most of the controller's CPU and a third
// of kube-apiserver's. Spaced by 400 µs per Node (2 s at 5,000 Nodes, 40 ms at 100, nothing a
// pool of a few nodes would notice), a pool's decisions cost it about a hundredth of a core
// whatever the cluster's size, and each starts nodes for every slot freed since the last. Every
// decision applies the same rules (maxUnavailable, pacing, holds, priorities) to what the cache
// holds when it runs: waiting changes when nodes start, not which rules choose them; and a
// real node's update (a drain, a reboot) takes minutes, not seconds.
const wakeSpacingPerNode = 400 * time.Microsecond

// maxWakeSpacing bounds the spacing: OpenShift's node controller waits this long (its
// updateDelay) after every Node event before it syncs the pool.
const maxWakeSpacing = 5 * time.Second

// wakeSpacing is how far apart Node events may wake a pool whose decision reads nodes Nodes.
func wakeSpacing(nodes int) time.Duration {
	return min(time.Duration(nodes)*wakeSpacingPerNode, maxWakeSpacing)
}

// wakeDelay is how long a Node event at now waits before it wakes a pool whose last decision
// began at last and read nodes Nodes: nothing once the spacing has passed (an event after a
// quiet spell, such as the one node of a maxUnavailable 1 pool reporting Done, is decided at
// once), else the rest of the spacing, so a burst of events is one decision at its end. The
// zero last (no decision yet) waits for nothing.
func wakeDelay(last time.Time, nodes int, now time.Time) time.Duration {
	if last.IsZero() {
		return 0
	}
	return max(last.Add(wakeSpacing(nodes)).Sub(now), 0)
}

// decided is when a pool's last decision began and how many Nodes it read.
type decided struct {
	at    time.Time
	nodes int
}

// decisions remembers each pool's last decision, for spacing the next.
type decisions struct {
	mu   sync.Mutex
	last map[string]decided
}

// begin records that a decision about pool began at at; it is spaced by the Nodes the one
// before read until read says how many it reads itself.
func (d *decisions) begin(pool string, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.last == nil {
		d.last = map[string]decided{}
	}
	last := d.last[pool]
	last.at = at
	d.last[pool] = last
}

// read records how many Nodes the decision about pool that began last reads.
func (d *decisions) read(pool string, nodes int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if last, ok := d.last[pool]; ok {
		last.nodes = nodes
		d.last[pool] = last
	}
}

func (d *decisions) forget(pool string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.last, pool)
}

// wake enqueues pool for a Node event at now, after wakeDelay. The queue keeps the earliest
// time an item was asked for, so the events of one spacing all share its end, and an item
// already due (a pool change, a requeue) is not held back.
func (d *decisions) wake(q workqueue.TypedRateLimitingInterface[reconcile.Request], pool string, now time.Time) {
	d.mu.Lock()
	last := d.last[pool]
	d.mu.Unlock()
	req := reconcile.Request{NamespacedName: client.ObjectKey{Name: pool}}
	if after := wakeDelay(last.at, last.nodes, now); after > 0 {
		q.AddAfter(req, after)
		return
	}
	q.Add(req)
}
