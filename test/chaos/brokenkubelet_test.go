package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/test/clustertest"
)

const (
	// brokenBootTimeout is the policy's nodeBootTimeout: short, so the round stays lean, and
	// long enough that the API server's outage (apiDownMax, injected at most apiDownLatest
	// into the broken boot) ends well inside it.
	brokenBootTimeout = 45 * time.Second
	apiDownMax        = 6 * time.Second
	apiDownLatest     = 15 * time.Second
	// maxBrokenKills bounds the controller SIGKILLs of a broken-kubelet round: each leaves the
	// lease held 15 s, so a kill every 4–8 s keeps the pool without a leader for most of the
	// broken boot, the revert and the rollback.
	maxBrokenKills = 6
	// brokenKubeletDropIn keeps the kubelet from starting (the MachineConfig of issue 34).
	brokenKubeletDropIn = "/etc/systemd/system/kubelet.service.d/99-chaos-broken.conf"
)

// brokenKubelet is issue 34's kubelet-breaking MachineConfig under spec.onFailure: Rollback and
// a 45 s nodeBootTimeout, with maxUnavailable 1: the node the node controller starts reboots
// into a kubelet that never runs, its boot guard (a host unit) reverts the update and reboots
// it into the previous config, and the pool undoes the rollout and is held naming the failed
// render. From the broken boot until the pool is held the controller is SIGKILLed every 4–8 s
// (at most maxBrokenKills times), and once, 5–15 s into the broken boot, kube-apiserver and etcd are stopped for 3–6 s.
// Only the nodes the node controller started may ever get the bad target, each must have
// reverted itself, and no other node's guard may revert anything. Deleting the bad
// MachineConfig ends the hold; the pool settles where it was.
func (s *suite) brokenKubelet(t *testing.T, ctx context.Context, r *round) {
	s.setLimit(t, ctx, r, 1)
	before := s.cl.Pool(t, ctx).Spec.Configuration.Name
	policy := &rolloutv1.MachineConfigPoolRollout{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("chaos-broken-kubelet-%d", r.n)},
		Spec: rolloutv1.MachineConfigPoolRolloutSpec{
			PoolSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"pools.operator.machineconfiguration.openshift.io/worker": ""}},
			NodeBootTimeout: &metav1.Duration{Duration: brokenBootTimeout},
			OnFailure:       rolloutv1.FailureRollback,
		},
	}
	// The round and seed in the drop-in make each round's bad render new: a guard reverts a
	// target once.
	bad := clustertest.FileConfig(fmt.Sprintf("60-chaos-broken-kubelet-%d", r.n), brokenKubeletDropIn,
		fmt.Sprintf("# chaos round %d seed %d\n[Service]\nExecStartPre=/bin/false\n", r.n, s.seed))
	badDeleted := false
	defer func() {
		if !badDeleted {
			_ = s.cl.C.Delete(context.Background(), bad)
		}
		_ = client.IgnoreNotFound(s.cl.C.Delete(context.Background(), policy))
	}()
	since := time.Now()
	if err := s.cl.C.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	s.cl.Watcher.Reset()
	r.started = time.Now()
	if err := s.cl.C.Create(ctx, bad); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(s.extraGone, brokenKubeletDropIn) {
		s.extraGone = append(s.extraGone, brokenKubeletDropIn)
	}

	badRender := ""
	if err := clustertest.WaitFor(ctx, 2*time.Minute, func() bool {
		var p mcfgv1.MachineConfigPool
		if s.cl.C.Get(ctx, client.ObjectKey{Name: protocol.WorkerPool}, &p) == nil && clustertest.HasSource(&p, bad.Name) {
			badRender = p.Spec.Configuration.Name
		}
		return badRender != ""
	}); err != nil {
		t.Fatalf("the pool never targeted a config with %s: %v", bad.Name, err)
	}
	w := s.watchBadTarget(ctx, badRender)
	defer w.stop()

	// The first node given the bad render, and its broken boot.
	first := ""
	if err := clustertest.WaitFor(ctx, 2*time.Minute, func() bool {
		first = w.any()
		return first != ""
	}); err != nil {
		t.Fatalf("no node was given %s: %v", badRender, err)
	}
	boots := s.cl.Boots(t, first)
	var brokenAt time.Time
	if err := clustertest.WaitFor(ctx, 3*time.Minute, func() bool {
		if s.cl.Boots(t, first) > boots {
			brokenAt = time.Now()
			return true
		}
		return false
	}); err != nil {
		t.Logf("nodes now:\n%s", s.describe(ctx))
		t.Fatalf("%s never rebooted into %s: %v", first, badRender, err)
	}

	// Faults through the broken boot, the guard's wait, its revert and the pool's rollback. The
	// API server's outage is drawn here: the kill loop draws from the rng while it runs.
	apiWait, apiDown := between(r.rng, 5*time.Second, apiDownLatest), between(r.rng, 3*time.Second, apiDownMax)
	signals := []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM}
	apiSig, etcdSig := signals[r.rng.IntN(2)], signals[r.rng.IntN(2)]
	stop := s.inject(t, ctx, func(ctx context.Context) {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.restartAPIServer(t, ctx, r, apiWait, apiDown, apiSig, etcdSig)
		}()
		defer wg.Wait()
		last := ""
		for kills := 0; kills < maxBrokenKills; kills++ {
			if !clustertest.Sleep(ctx, between(r.rng, 4*time.Second, 8*time.Second)) {
				return
			}
			pid, err := s.killController(ctx, last)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				t.Errorf("killing the controller: %v", err)
				return
			}
			last = pid
			r.faults.add(time.Now(), "")
		}
	})

	var readyAt time.Time
	if err := clustertest.WaitFor(ctx, 3*time.Minute, func() bool {
		if s.cl.Boots(t, first) < boots+2 {
			return false
		}
		var n corev1.Node
		if s.cl.C.Get(ctx, client.ObjectKey{Name: first}, &n) != nil {
			return false
		}
		if readyAfter(&n, brokenAt) && n.Annotations[protocol.CurrentConfigAnnotation] == before {
			readyAt = time.Now()
			return true
		}
		return false
	}); err != nil {
		stop()
		t.Logf("nodes now:\n%s", s.describe(ctx))
		t.Fatalf("%s was not reverted, rebooted and Ready on %s within 3 min of its broken boot: %v", first, before, err)
	}

	var heldAt time.Time
	var rb rolloutv1.Rollback
	why := ""
	err := clustertest.WaitFor(ctx, 3*time.Minute, func() bool {
		var p mcfgv1.MachineConfigPool
		if err := s.cl.C.Get(ctx, client.ObjectKey{Name: protocol.WorkerPool}, &p); err != nil {
			why = err.Error()
			return false
		}
		raw, ok := p.Annotations[rolloutv1.RollbackAnnotation]
		c := poolcondition.Get(&p.Status, poolcondition.RolledBack)
		switch {
		case !ok:
			why = "no " + rolloutv1.RollbackAnnotation
		case c == nil || c.Status != corev1.ConditionTrue:
			why = "condition RolledBack not True"
		case p.Spec.Configuration.Name != before:
			why = "target " + p.Spec.Configuration.Name
		default:
			if err := json.Unmarshal([]byte(raw), &rb); err != nil {
				t.Fatalf("%s %s: %v", rolloutv1.RollbackAnnotation, raw, err)
			}
			if !strings.Contains(c.Message, badRender) {
				t.Errorf("condition RolledBack does not name %s: %s", badRender, c.Message)
			}
			heldAt = time.Now()
			return true
		}
		return false
	})
	stop()
	if err != nil {
		t.Logf("nodes now:\n%s", s.describe(ctx))
		t.Fatalf("the worker pool was never held on %s by spec.onFailure: %v (last: %s)", before, err, why)
	}
	if rb.From != badRender || rb.To != before || rb.By != "spec.onFailure of mcprollout/"+policy.Name ||
		!strings.Contains(rb.Reason, first) || !strings.Contains(rb.Reason, "NodeBootFailed") {
		t.Errorf("rollback %+v, want from %s to %s by mcprollout/%s, naming %s and NodeBootFailed", rb, badRender, before, policy.Name, first)
	}
	if err := clustertest.WaitFor(ctx, 3*time.Minute, func() bool {
		_, reason, err := s.settled(ctx)
		why = reason
		return err == nil && reason == ""
	}); err != nil {
		t.Logf("nodes now:\n%s", s.describe(ctx))
		t.Fatalf("the pool held by the rollback never settled on %s: %v (last: %s)", before, err, why)
	}
	line := fmt.Sprintf("chaos: test=%s round=%d/%d node=%s brokenBootToReady=%s brokenBootToHeld=%s readyToHeld=%s",
		r.test, r.n, s.rounds, first, readyAt.Sub(brokenAt).Round(100*time.Millisecond),
		heldAt.Sub(brokenAt).Round(100*time.Millisecond), heldAt.Sub(readyAt).Round(100*time.Millisecond))
	s.figures = append(s.figures, line)
	t.Log(line)

	// Only the nodes the node controller started (maxUnavailable: 1) got the bad render, each
	// reverted itself, and no other node's guard reverted anything.
	targeted := w.stop()
	if len(targeted) > r.limit {
		t.Errorf("nodes given %s: %v, more than maxUnavailable %d", badRender, targeted, r.limit)
	}
	reverted := s.bootFailedEvents(t, ctx, since)
	for _, n := range targeted {
		if !reverted[n] && !w.failedReason(n) {
			t.Errorf("%s was given %s but never reported NodeBootFailed (event or reason)", n, badRender)
		}
	}
	for n := range reverted {
		if !slices.Contains(targeted, n) {
			t.Errorf("healthy node %s reverted a boot (NodeBootFailed) though it was never given %s", n, badRender)
		}
	}
	t.Logf("chaos: nodes given %s: %v; nodes that reported NodeBootFailed: %v", badRender, targeted, slices.Sorted(maps.Keys(reverted)))

	// The admin deletes the bad MachineConfig: the newest render is the previous one again,
	// which ends the hold.
	if err := s.cl.C.Delete(ctx, bad); err != nil {
		t.Fatal(err)
	}
	badDeleted = true
	if err := clustertest.WaitFor(ctx, 2*time.Minute, func() bool {
		var p mcfgv1.MachineConfigPool
		if s.cl.C.Get(ctx, client.ObjectKey{Name: protocol.WorkerPool}, &p) != nil {
			return false
		}
		_, held := p.Annotations[rolloutv1.RollbackAnnotation]
		return !held && !poolcondition.IsTrue(&p.Status, poolcondition.RolledBack)
	}); err != nil {
		t.Errorf("deleting %s did not end the rollback hold: %v", bad.Name, err)
	}
	if err := s.cl.C.Delete(ctx, policy); err != nil {
		t.Fatal(err)
	}
	s.settle(t, ctx, r, nil)
}

// restartAPIServer stops kube-apiserver with apiSig and etcd with etcdSig after wait, leaves
// them down for down and starts them again, as apiServerRestart does.
func (s *suite) restartAPIServer(t *testing.T, ctx context.Context, r *round, wait, down time.Duration, apiSig, etcdSig syscall.Signal) {
	if !clustertest.Sleep(ctx, wait) {
		return
	}
	how, back, ok := s.stopControlPlane(t, apiSig, etcdSig, down)
	if !ok {
		return
	}
	r.faults.add(time.Now(), fmt.Sprintf("%s %s into the broken boot; left down %s; API back after %s",
		how, wait.Round(100*time.Millisecond), down.Round(100*time.Millisecond), back.Round(100*time.Millisecond)))
}

// bootFailedEvents: the nodes with a NodeBootFailed warning since since.
func (s *suite) bootFailedEvents(t *testing.T, ctx context.Context, since time.Time) map[string]bool {
	var evs corev1.EventList
	if err := s.cl.C.List(ctx, &evs, client.InNamespace(metav1.NamespaceDefault)); err != nil {
		t.Fatalf("listing events: %v", err)
	}
	nodes := map[string]bool{}
	for _, e := range evs.Items {
		at := e.LastTimestamp.Time
		if at.IsZero() {
			at = e.EventTime.Time
		}
		// Event times are in seconds.
		if e.Reason == "NodeBootFailed" && e.Type == corev1.EventTypeWarning && !at.Before(since.Truncate(time.Second)) {
			nodes[e.InvolvedObject.Name] = true
		}
	}
	return nodes
}

// readyAfter: the Node's Ready condition is True and was reported after at.
func readyAfter(n *corev1.Node, at time.Time) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue && c.LastHeartbeatTime.After(at)
		}
	}
	return false
}

// badTargetWatch polls (every 200 ms, whatever the API server's state) which nodes are ever
// given the bad render and which ever reported NodeBootFailed in their reason.
type badTargetWatch struct {
	mu       sync.Mutex
	targeted map[string]bool
	failed   map[string]bool
	cancel   context.CancelFunc
	done     chan struct{}
}

func (s *suite) watchBadTarget(ctx context.Context, bad string) *badTargetWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &badTargetWatch{targeted: map[string]bool{}, failed: map[string]bool{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for clustertest.Sleep(ctx, 200*time.Millisecond) {
			var nodes corev1.NodeList
			if s.cl.C.List(ctx, &nodes, client.HasLabels{clustertest.WorkerSelector}) != nil {
				continue
			}
			w.mu.Lock()
			for i := range nodes.Items {
				n := &nodes.Items[i]
				if n.Annotations[protocol.DesiredConfigAnnotation] == bad {
					w.targeted[n.Name] = true
				}
				if rollout.Degraded(n) && strings.HasPrefix(n.Annotations[protocol.ReasonAnnotation], "NodeBootFailed: ") {
					w.failed[n.Name] = true
				}
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// any is a node given the bad render ("" while there is none).
func (w *badTargetWatch) any() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for n := range w.targeted {
		return n
	}
	return ""
}

func (w *badTargetWatch) failedReason(node string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed[node]
}

// stop ends the polling and returns the nodes ever given the bad render, sorted.
func (w *badTargetWatch) stop() []string {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.targeted))
}
