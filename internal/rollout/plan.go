package rollout

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mco-dev/mco/internal/protocol"
)

// ZoneLabel orders candidates: one zone is finished before the next starts, so a zone-spread
// workload loses at most one zone's worth of capacity at a time.
const ZoneLabel = "topology.kubernetes.io/zone"

// Input is everything one decision about a pool needs.
type Input struct {
	Pool *mcfgv1.MachineConfigPool
	// Nodes are the pool's managed members (see Members).
	Nodes []*corev1.Node
	// Unmanaged are the nodes whose primary pool this is but which are not managed yet
	// (see Split): offered the target, and adopted once their agent asked and the admin
	// approved. They are not counted.
	Unmanaged []*corev1.Node
	Now       metav1.Time
	// NotReadyThreshold is how long a node may stay NotReady in the middle of an update before
	// the pool reports it and stops starting others (DefaultNotReadyThreshold when 0).
	NotReadyThreshold time.Duration
	// StallThreshold is how long a Ready node may take to finish moving to the target it was
	// given before the pool reports it (UpdateStalled; DefaultStallThreshold when 0).
	StallThreshold time.Duration
	// StartBudget, when not nil, caps how many healthy nodes may start now: a pacing policy's
	// allowance (canary, soak, window). It only ever lowers what maxUnavailable allows, and
	// never holds back retargeting a failing node.
	StartBudget *int
}

// Decision is what the node controller should make true for a pool.
type Decision struct {
	// Target is the rendered config the pool's nodes move to; "" while the render controller has
	// not set one yet, in which case nothing is targeted and only counts are reported.
	Target string
	// Next names the nodes to point at Target now, in the order they were chosen.
	Next []string
	// Started counts the nodes among Next that start an update to Target: healthy ones and
	// superseded ones, what a pacing budget was spent on (the rest retarget failing nodes).
	Started int
	// Adopted are the nodes among Next that were waiting for adoption (unmanaged, approved):
	// the controller writes them only if they have not changed since it read them, so an
	// approval withdrawn meanwhile holds.
	Adopted []string
	// Offers are the adoption-target annotations to write (Target "" removes one): every
	// unmanaged node of the pool is offered the target; a managed node carries no offer, nor,
	// once Done, the admin's adopt=true.
	Offers []Offer
	// AwaitingAdoption are the unmanaged nodes whose agent reported that adopting them into
	// Target changes their host (NodesAwaitingAdoption), approved or not.
	AwaitingAdoption []Awaiting
	// Superseded are the nodes among Next moved from an older target before their agent began
	// to disrupt them for it (see Superseded); the controller writes them only if they have not
	// changed since it read them, so an agent asking for its drain meanwhile wins.
	Superseded []string
	// Status is the pool status to write: counts, configuration and the conditions this
	// controller owns; conditions other controllers own are carried over unchanged.
	Status mcfgv1.MachineConfigPoolStatus
	// Completed is true when this decision moves status.configuration to Target.
	Completed bool
	// OnlyHeld is true when the pool waits for nothing but held nodes (OnlyHeldBehind): no node
	// starts until an admin releases one, on purpose, as for a paused pool.
	OnlyHeld bool
	// Problems are pool misconfigurations worth an event (e.g. an unparsable maxUnavailable).
	Problems []string
	// Unresponsive are the nodes NotReady past the threshold in the middle of an update; while
	// there are any, no node is started.
	Unresponsive []Unresponsive
	// Stalled are the Ready nodes updating longer than the stall threshold with no other reason
	// reported (UpdateStalled).
	Stalled []Stalled
	// RecheckAfter, when not 0, is when a NotReady or updating node crosses its threshold:
	// decide again then even if nothing changes.
	RecheckAfter time.Duration
}

// Decide chooses the next nodes to update and computes the pool's status. Next is computed
// first and the status from the nodes as they will be once Next is written, so the counts a
// watcher sees never lag the controller's own action.
func Decide(in Input) Decision {
	d := Decision{Target: in.Pool.Spec.Configuration.Name}
	limit, err := MaxUnavailable(in.Pool, len(in.Nodes))
	if err != nil {
		d.Problems = append(d.Problems, err.Error())
	}
	threshold := in.NotReadyThreshold
	if threshold <= 0 {
		threshold = DefaultNotReadyThreshold
	}
	d.Problems = append(d.Problems, HoldProblems(in.Nodes)...)
	d.Problems = append(d.Problems, HoldProblems(in.Unmanaged)...)
	d.Unresponsive, d.RecheckAfter = unresponsive(in.Nodes, threshold, in.Now.Time)
	stallThreshold := in.StallThreshold
	if stallThreshold <= 0 {
		stallThreshold = DefaultStallThreshold
	}
	var stallRecheck time.Duration
	d.Stalled, stallRecheck = stalled(in.Nodes, stallThreshold, in.Now.Time)
	if stallRecheck > 0 && (d.RecheckAfter == 0 || stallRecheck < d.RecheckAfter) {
		d.RecheckAfter = stallRecheck
	}
	d.Offers = append(offers(in.Nodes, d.Target), offers(in.Unmanaged, d.Target)...)
	var adoptable []*corev1.Node
	d.AwaitingAdoption, adoptable = adoptionCandidates(in.Unmanaged, in.Pool)
	if d.Target != "" && !in.Pool.Spec.Paused && len(d.Unresponsive) == 0 {
		d.Next, d.Superseded, d.Started = nextNodes(in.Nodes, adoptable, d.Target, limit, in.StartBudget)
	}
	after := in.Nodes
	if len(d.Next) > 0 {
		// A node whose adoption starts is counted from now on, unavailable until its agent
		// reports Done.
		for _, n := range adoptable {
			if slices.Contains(d.Next, n.Name) {
				d.Adopted = append(d.Adopted, n.Name)
				after = append(slices.Clip(after), n)
			}
		}
		after = withDesired(after, d.Next, d.Target)
	}
	d.AwaitingAdoption = slices.DeleteFunc(d.AwaitingAdoption, func(a Awaiting) bool { return slices.Contains(d.Adopted, a.Node) })
	d.Status, d.Completed = computeStatus(in.Pool, after, d.Unresponsive, threshold, in.Now)
	if d.Target != "" {
		setStalled(&d.Status, d.Stalled, stallThreshold, in.Now)
	}
	d.OnlyHeld = d.Target != "" && OnlyHeldBehind(after, d.Target)
	if d.Target != "" {
		setAwaitingAdoption(&d.Status, in.Pool.Name, d.AwaitingAdoption, in.Now)
	}
	return d
}

// MaxUnavailable is how many of n nodes may be unavailable at once: maxUnavailable as a count or
// a percentage of n rounded down, never less than 1 (so 0 and tiny percentages still make
// progress); 1 when unset or unparsable.
func MaxUnavailable(pool *mcfgv1.MachineConfigPool, n int) (int, error) {
	if pool.Spec.MaxUnavailable == nil {
		return 1, nil
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(pool.Spec.MaxUnavailable, n, false)
	if err != nil {
		return 1, fmt.Errorf("pool %s: maxUnavailable %q is neither a count nor a percentage; using 1", pool.Name, pool.Spec.MaxUnavailable.String())
	}
	return max(v, 1), nil
}

// nextNodes applies the capacity rule: healthy nodes are started only while fewer than limit
// nodes are unavailable. A node failing towards an older target (an update that was given up,
// perhaps still cordoned by mco's drain for it) is always given the new target: it is
// unavailable already, so retargeting it costs no capacity, and without it one broken config
// would leave the pool stuck with no way to roll a fixed one onto the broken node. So is a node
// Degraded in the config it is in (drift: a file gone missing behind a link a reboot emptied),
// for the same reason: deleting the MachineConfig that wrote the file must reach it. A node whose
// older target was superseded before its agent began to disrupt it is given the new target
// too, also without capacity (it is unavailable already), but within a pacing budget: it
// starts an update to the new target as much as a healthy node does. One whose agent did begin
// (drain asked, written, reboot queued) finishes that update first; it is no candidate before.
// Nodes approved for adoption (adoptable) are healthy candidates like the pool's own: not
// unavailable while they wait (they are not counted yet), ordered among the others. A held node
// is never chosen, in any of these roles: the admin releases it (an update its agent already
// began, for any target, finishes by the rules above; nothing here stops an agent).
func nextNodes(nodes, adoptable []*corev1.Node, target string, limit int, budget *int) (next, supersededNodes []string, started int) {
	var retarget, moved, healthy []*corev1.Node
	down := 0
	for _, n := range nodes {
		c, ready := configOf(n), Ready(n)
		if unavailable(ready, c) {
			down++
		}
		switch {
		case c.desired == target:
		case Held(n):
		case superseded(n, c, target):
			moved = append(moved, n)
		case c.updateUnderway():
			// Its agent began disrupting it for an older target: that update finishes first,
			// or a drain and a reboot would be spent on it for nothing.
		case !Healthy(n):
		case c.degraded() && (ready || CordonedForUpdate(n)):
			retarget = append(retarget, n)
		case ready:
			healthy = append(healthy, n)
		}
	}
	for _, n := range adoptable {
		if !Held(n) {
			healthy = append(healthy, n)
		}
	}
	SortCandidates(retarget)
	SortCandidates(moved)
	for _, n := range retarget {
		next = append(next, n.Name)
	}
	left := -1 // what the pacing budget still allows; -1 is no budget
	if budget != nil {
		left = max(*budget, 0)
	}
	if left >= 0 {
		moved = moved[:min(left, len(moved))]
		left -= len(moved)
	}
	for _, n := range moved {
		next, supersededNodes = append(next, n.Name), append(supersededNodes, n.Name)
	}
	start := min(max(limit-down, 0), len(healthy))
	if left >= 0 {
		start = min(start, left)
	}
	for _, n := range skippedLast(healthy, target, start) {
		next = append(next, n.Name)
	}
	return next, supersededNodes, len(moved) + start
}

// SortCandidates orders nodes by update priority, highest first (see Priority); among equal
// priorities zoned first (by zone name), then unzoned; within each, oldest first; the name
// breaks ties so the order is total.
func SortCandidates(nodes []*corev1.Node) {
	keys := candidateKeys(nodes)
	slices.SortStableFunc(keys, compareKeys)
	for i, k := range keys {
		nodes[i] = k.node
	}
}

// candidateKey is what SortCandidates orders a node by, read once: choosing among thousands of
// nodes compares each of them many times, and reading (and parsing) the priority annotation
// and the zone label on every comparison was a tenth of a decision's CPU at 5,000 nodes.
type candidateKey struct {
	node     *corev1.Node
	priority int
	zone     string
}

func candidateKeys(nodes []*corev1.Node) []candidateKey {
	keys := make([]candidateKey, len(nodes))
	for i, n := range nodes {
		keys[i] = candidateKey{node: n, priority: Priority(n), zone: n.Labels[ZoneLabel]}
	}
	return keys
}

func compareKeys(ka, kb candidateKey) int {
	if c := cmp.Compare(kb.priority, ka.priority); c != 0 {
		return c
	}
	a, b := ka.node, kb.node
	za, zb := ka.zone, kb.zone
	switch {
	case (za == "") != (zb == ""):
		if za == "" {
			return 1
		}
		return -1
	case za != zb:
		return strings.Compare(za, zb)
	}
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// firstCandidates returns the k nodes SortCandidates puts first, in its order. A rollout
// decides on every node event, most often with a slot or two free among thousands of waiting
// nodes: keeping the k best seen costs about n·log k comparisons instead of sorting all n.
func firstCandidates(nodes []*corev1.Node, k int) []*corev1.Node {
	if k <= 0 {
		return nil
	}
	if k >= len(nodes)/8 {
		SortCandidates(nodes)
		return nodes[:k]
	}
	// The k best so far, as indexes into keys: moving them costs no more than moving pointers.
	keys := candidateKeys(nodes)
	byIndex := func(i, j int) int { return compareKeys(keys[i], keys[j]) }
	best := make([]int, 0, k+1)
	for n := range keys {
		if len(best) == k && byIndex(n, best[k-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(best, n, byIndex)
		best = slices.Insert(best, i, n)
		if len(best) > k {
			best = best[:k]
		}
	}
	out := make([]*corev1.Node, len(best))
	for i, b := range best {
		out[i] = keys[b].node
	}
	return out
}

// withDesired returns nodes with the chosen ones' desiredConfig set to target (copies; the
// inputs stay untouched). A chosen node's copy has annotations of its own and shares the rest
// with the input, which nothing writes: deep copies of a batch of hundreds were a tenth of a
// decision's CPU at 5,000 nodes.
func withDesired(nodes []*corev1.Node, chosen []string, target string) []*corev1.Node {
	picked := make(map[string]bool, len(chosen))
	for _, name := range chosen {
		picked[name] = true
	}
	out := make([]*corev1.Node, len(nodes))
	for i, n := range nodes {
		out[i] = n
		if picked[n.Name] {
			c := *n
			c.Annotations = maps.Clone(n.Annotations)
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations[protocol.DesiredConfigAnnotation] = target
			out[i] = &c
		}
	}
	return out
}
