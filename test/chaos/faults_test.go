package chaos

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/daemon/failpoint"
	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/dev/machine"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
)

// Bounds on the faults of one round, so a round always ends.
const (
	maxControllerKills = 15
	maxAgentKills      = 12
	// failpointVictims agents of each agent-kill round kill themselves at distinct steps among
	// the first maxFailpointStep of their transaction (a file and a kernel argument: about 7).
	failpointVictims = 3
	maxFailpointStep = 8
	// agentKillGap keeps systemd's start limit (5 starts in 10 s) out of the test: an agent is
	// killed again only after this long.
	agentKillGap = 5 * time.Second
)

// controllerKill: the controller's container (config/default's Deployment, on the control-plane
// machine) is killed with SIGKILL every 2–3 s through the rollout, each time once the kubelet
// has restarted it after the last kill.
func (s *suite) controllerKill(t *testing.T, ctx context.Context, r *round) {
	s.setLimit(t, ctx, r, 2)
	s.change(t, ctx, r, false)
	stop := s.inject(t, ctx, func(ctx context.Context) {
		last := ""
		for kills := 0; kills < maxControllerKills; kills++ {
			if !clustertest.Sleep(ctx, between(r.rng, 2*time.Second, 3*time.Second)) {
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
	s.settle(t, ctx, r, stop)
}

// killController waits (up to 30 s) until the controller's container runs as a process other
// than previous, the one killed last (the kubelet restarts it within its 5 s back-off), sends it
// SIGKILL and returns its PID.
func (s *suite) killController(ctx context.Context, previous string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		out, err := s.cl.Output(ctx, devcluster.ControlPlaneMachine, "sh", "-c",
			`pid=$(pgrep -f "$1" | head -1) && [ "${pid:-0}" -gt 0 ] && [ "$pid" != "$2" ] && kill -KILL "$pid" && echo "$pid"`,
			"sh", devcluster.ControllerProcess, previous)
		if err == nil {
			return strings.TrimSpace(out), nil
		}
		if !clustertest.Sleep(ctx, 200*time.Millisecond) {
			return "", fmt.Errorf("no controller process other than %q on %s after 30 s: %v", previous, devcluster.ControlPlaneMachine, err)
		}
	}
}

// apiServerRestart: once the rollout is under way (a node unavailable), kube-apiserver and etcd
// are stopped (SIGKILL or SIGTERM each, drawn from the seed), left down for 3–6 s, and started
// again with the same arguments, ports and data. The round also adds a kernel argument.
func (s *suite) apiServerRestart(t *testing.T, ctx context.Context, r *round) {
	s.setLimit(t, ctx, r, 2)
	relists := s.cl.Watcher.Relists()
	s.change(t, ctx, r, true)
	stop := s.inject(t, ctx, func(ctx context.Context) {
		for len(s.cl.Watcher.Unavailable()) == 0 {
			if !clustertest.Sleep(ctx, 50*time.Millisecond) {
				return
			}
		}
		if !clustertest.Sleep(ctx, between(r.rng, 0, 2*time.Second)) {
			return
		}
		signals := []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM}
		apiSig, etcdSig := signals[r.rng.IntN(2)], signals[r.rng.IntN(2)]
		down := between(r.rng, 3*time.Second, 6*time.Second)
		unavailable := s.cl.Watcher.Unavailable()
		how, back, ok := s.stopControlPlane(t, apiSig, etcdSig, down)
		if !ok {
			return
		}
		r.faults.add(time.Now(), fmt.Sprintf("%s while %v were unavailable; left down %s; API back after %s",
			how, unavailable, down.Round(100*time.Millisecond), back.Round(100*time.Millisecond)))
	})
	s.settle(t, ctx, r, stop)
	t.Logf("chaos: the watcher listed the Nodes again %d times after broken watches", s.cl.Watcher.Relists()-relists)
}

// agentKill: agents are killed with SIGKILL through a rollout that reboots for a new file and
// a kernel argument, in two ways, both drawn from the seed:
//   - three agents kill themselves at distinct steps (1–maxFailpointStep) of their update
//     transaction (failpoint.KillAtEnv, armed through failpoint.ArmFile, which the agent
//     removes when it reads it), so the kills land inside the transaction, before and after its commit point, on
//     real machines;
//   - the other agents' main processes are killed from inside their machines every 0.3–1.5 s,
//     mostly on nodes in the middle of their update. What each timed kill interrupts depends on
//     timing.
//
// The kubelet restarts a killed agent's container (with its crash-loop back-off).
func (s *suite) agentKill(t *testing.T, ctx context.Context, r *round) {
	s.setLimit(t, ctx, r, 2)
	armed := map[string]int{} // node → failpoint step
	steps := r.rng.Perm(maxFailpointStep)
	for i, n := range r.rng.Perm(len(s.nodes))[:failpointVictims] {
		armed[s.nodes[n]] = steps[i] + 1
	}
	for _, node := range slices.Sorted(maps.Keys(armed)) {
		if err := s.armFailpoint(ctx, node, armed[node]); err != nil {
			t.Fatalf("arming the failpoint on %s: %v", node, err)
		}
	}
	s.change(t, ctx, r, true)
	fired := map[string]bool{}
	stop := s.inject(t, ctx, func(ctx context.Context) {
		checkFailpoints := func(ctx context.Context) {
			for node, step := range armed {
				if at, ok := s.failpointFired(ctx, node); ok && !fired[node] {
					fired[node] = true
					r.faults.add(at, fmt.Sprintf("%s=%d: the agent of %s killed itself at step %d of its transaction", failpoint.KillAtEnv, step, node, step))
				}
			}
		}
		defer checkFailpoints(context.Background())
		last := map[string]time.Time{}
		eligible := func(names []string) []string {
			return slices.DeleteFunc(slices.Clone(names), func(n string) bool {
				_, isArmed := armed[n]
				return isArmed || time.Since(last[n]) < agentKillGap
			})
		}
		for kills := 0; ; {
			if !clustertest.Sleep(ctx, between(r.rng, 300*time.Millisecond, 1500*time.Millisecond)) {
				return
			}
			checkFailpoints(ctx)
			anyNode, pick := r.rng.Float64() >= 0.75, r.rng.IntN(1<<20)
			if kills >= maxAgentKills {
				continue
			}
			candidates, what := eligible(s.cl.Watcher.Unavailable()), "updating"
			if anyNode || len(candidates) == 0 {
				candidates, what = eligible(s.nodes), "any"
			}
			if len(candidates) == 0 {
				continue
			}
			victim := candidates[pick%len(candidates)]
			pid, err := s.killAgent(ctx, victim)
			if err != nil {
				continue // rebooting, or the agent is between restarts
			}
			last[victim] = time.Now()
			kills++
			r.faults.add(time.Now(), fmt.Sprintf("SIGKILL to the agent of %s node %s (pid %s)", what, victim, pid))
		}
	})
	s.settle(t, ctx, r, stop)
	for _, node := range slices.Sorted(maps.Keys(armed)) {
		if !fired[node] {
			t.Logf("chaos: the failpoint at step %d on %s did not fire (its transaction had fewer steps)", armed[node], node)
		}
	}
}

// failpointFired reads the record the agent left when its failpoint fired ("killed KILL <unix time>").
func (s *suite) failpointFired(ctx context.Context, node string) (time.Time, bool) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	out, err := s.cl.Output(ctx, node, "cat", failpoint.FiredFile)
	if err != nil || !strings.Contains(out, "KILL") {
		return time.Time{}, false
	}
	at := time.Now()
	if f := strings.Fields(out); len(f) == 3 {
		if sec, err := strconv.ParseFloat(f[2], 64); err == nil {
			at = time.Unix(0, int64(sec*1e9))
		}
	}
	return at, true
}

// armFailpoint arms failpoint.KillAtEnv=step for the agent of node through failpoint.ArmFile
// on its root, which the agent reads and removes when it starts (so the recovery after the kill
// is not killed at the same step again), then kills the agent for the kubelet to restart it.
// The agent records the kill in failpoint.FiredFile just before it dies.
func (s *suite) armFailpoint(ctx context.Context, node string, step int) error {
	script := `rm -f ` + failpoint.FiredFile + ` && printf '%s=%d\n' "$1" "$2" > ` + failpoint.ArmFile + ` &&
pkill -KILL -f "$3"`
	_, err := s.cl.Output(ctx, node, "sh", "-c", script, "sh", failpoint.KillAtEnv, strconv.Itoa(step), devcluster.AgentProcess)
	return err
}

// killAgent sends SIGKILL to the agent of node (its container's process, which the machine sees)
// and returns its PID.
func (s *suite) killAgent(ctx context.Context, node string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	out, err := s.cl.Output(ctx, node, "sh", "-c",
		`pid=$(pgrep -f "$1" | head -1) && [ "${pid:-0}" -gt 0 ] && kill -KILL "$pid" && echo "$pid"`, "sh", devcluster.AgentProcess)
	return strings.TrimSpace(out), err
}

// badConfig is issue 13's scenario with maxUnavailable 1: on one node (drawn from the seed)
// /etc/x is a relative symlink leading out of the root (dangling inside it), and a MachineConfig
// writes /etc/x/file. That node is drained for the update (a file without a disruption policy
// reboots), fails and is Degraded; the bad config is then deleted, with nobody touching the
// node. The pool must roll the round's good config onto every node (the failed one included)
// and end Updated, with the symlink exactly as it was and nothing created where it points.
func (s *suite) badConfig(t *testing.T, ctx context.Context, r *round) {
	s.setLimit(t, ctx, r, 1)
	victim := s.nodes[r.rng.IntN(len(s.nodes))]
	elsewhere := fmt.Sprintf("/tmp/mco-chaos-elsewhere-%d", r.n)
	link := "../../.." + elsewhere
	if _, err := s.cl.Output(ctx, victim, "sh", "-c", "rm -rf /etc/x "+elsewhere+" && ln -s "+link+" /etc/x"); err != nil {
		t.Fatal(err)
	}
	// The symlink is this round's: the next round's bad config must fail on its own victim only.
	defer func() { _, _ = s.cl.Output(context.Background(), victim, "rm", "-f", "/etc/x") }()
	badOnly := fmt.Sprintf("/etc/chaos/bad-only-%d", r.n)
	bad := &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("60-chaos-bad-%d", r.n), Labels: map[string]string{protocol.RoleLabel: protocol.WorkerPool}},
		Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(fmt.Sprintf(
			`{"ignition":{"version":"3.4.0"},"storage":{"files":[`+
				`{"path":"/etc/x/file","mode":420,"contents":{"source":"data:,through%%20a%%20symlink%%0A"}},`+
				`{"path":%q,"mode":420,"contents":{"source":"data:,only%%20in%%20the%%20bad%%20config%%0A"}}]}}`, badOnly))}},
	}
	s.change(t, ctx, r, false)
	if err := s.cl.C.Create(ctx, bad); err != nil {
		t.Fatal(err)
	}
	var failed *corev1.Node
	err := clustertest.WaitFor(ctx, 4*time.Minute, func() bool {
		var n corev1.Node
		if s.cl.C.Get(ctx, client.ObjectKey{Name: victim}, &n) != nil {
			return false
		}
		a := n.Annotations
		if rollout.Degraded(&n) && a[protocol.DesiredConfigAnnotation] != s.target && a[protocol.CurrentConfigAnnotation] != a[protocol.DesiredConfigAnnotation] {
			failed = &n
			return true
		}
		return false
	})
	if err != nil {
		_ = s.cl.C.Delete(ctx, bad)
		t.Logf("nodes now:\n%s", s.describe(ctx))
		t.Fatalf("%s with /etc/x -> %s never failed the config writing /etc/x/file: %v", victim, link, err)
	}
	cordoned := failed.Spec.Unschedulable
	failedConfig := failed.Annotations[protocol.DesiredConfigAnnotation]
	if err := clustertest.WaitFor(ctx, time.Minute, func() bool {
		var p mcfgv1.MachineConfigPool
		if s.cl.C.Get(ctx, client.ObjectKey{Name: protocol.WorkerPool}, &p) != nil {
			return false
		}
		c := poolcondition.Get(&p.Status, mcfgv1.MachineConfigPoolDegraded)
		return c != nil && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, victim) && strings.Contains(c.Message, failedConfig)
	}); err != nil {
		t.Errorf("the pool never reported Degraded naming %s and %s: %v", victim, failedConfig, err)
	}
	if err := s.cl.C.Delete(ctx, bad); err != nil {
		t.Fatal(err)
	}
	r.faults.add(time.Now(), fmt.Sprintf("%s failed %s (cordoned: %v): %s", victim,
		failedConfig, cordoned, failed.Annotations[protocol.ReasonAnnotation]))
	if !cordoned {
		t.Logf("chaos: %s was not cordoned when it failed; the cordoned-failed-node case was not exercised", victim)
	}
	s.extraGone = append(s.extraGone, "/etc/x/file", badOnly)
	s.settle(t, ctx, r, nil)
	if got, err := s.cl.Output(ctx, victim, "readlink", "/etc/x"); err != nil || strings.TrimSpace(got) != link {
		t.Errorf("%s: /etc/x is no longer the symlink to %s the node had before the failed update: readlink %q (%v)", victim, link, got, err)
	}
	if out, err := s.cl.Output(ctx, victim, "sh", "-c", "ls -la "+elsewhere+" 2>/dev/null || true"); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("%s: the failed update created %s (where /etc/x points): %q %v", victim, elsewhere, out, err)
	}
}

// nodeLost: once the rollout is under way, a node in the middle of its update (drawn from the
// seed) is lost for good: its machine is stopped (a clean poweroff or its power cut, drawn from
// the seed) and its Node deleted. The rollout must finish on the rest. From the second round on
// a replacement machine joins first, so every round starts with the full pool.
func (s *suite) nodeLost(t *testing.T, ctx context.Context, r *round) {
	if len(s.nodes) < machines {
		name, err := devcluster.Join(ctx, s.cl.Dir, protocol.WorkerPool, testenv.ToolsDir(), testenv.RequireMCO(t))
		if err != nil {
			t.Fatalf("joining a replacement machine: %v", err)
		}
		s.nodes = append(s.nodes, name)
		s.requireSettled(t, ctx)
	}
	s.setLimit(t, ctx, r, 2)
	s.change(t, ctx, r, false)
	target := ""
	if err := clustertest.WaitFor(ctx, 2*time.Minute, func() bool {
		var p mcfgv1.MachineConfigPool
		if s.cl.C.Get(ctx, client.ObjectKey{Name: protocol.WorkerPool}, &p) == nil && clustertest.HasSource(&p, r.config.name) {
			target = p.Spec.Configuration.Name
		}
		return target != ""
	}); err != nil {
		t.Fatalf("the pool never targeted a config with %s: %v", r.config.name, err)
	}
	var updating []string
	if err := clustertest.WaitFor(ctx, 3*time.Minute, func() bool {
		updating = updating[:0]
		var nodes corev1.NodeList
		if s.cl.C.List(ctx, &nodes, client.HasLabels{clustertest.WorkerSelector}) != nil {
			return false
		}
		for i := range nodes.Items {
			n := &nodes.Items[i]
			if n.Annotations[protocol.DesiredConfigAnnotation] == target && !rollout.Done(n) {
				updating = append(updating, n.Name)
			}
		}
		slices.Sort(updating)
		return len(updating) > 0
	}); err != nil {
		t.Fatalf("no node was ever seen updating to %s: %v", target, err)
	}
	victim := updating[r.rng.IntN(len(updating))]
	grace, how := time.Duration(0), "power cut"
	if r.rng.IntN(2) == 0 {
		grace, how = 20*time.Second, "clean poweroff"
	}
	if err := machine.Stop(s.cl.MachineDir(victim), grace); err != nil {
		t.Fatalf("stopping %s: %v", victim, err)
	}
	var node corev1.Node
	node.Name = victim
	if err := s.cl.C.Delete(ctx, &node); err != nil {
		t.Fatalf("deleting Node %s: %v", victim, err)
	}
	r.faults.add(time.Now(), fmt.Sprintf("%s lost mid-update to %s (%s), Node deleted", victim, target, how))
	s.nodes = slices.DeleteFunc(s.nodes, func(n string) bool { return n == victim })
	s.settle(t, ctx, r, nil)
}

// inject runs f until the returned stop is called (at the latest when the test ends).
func (s *suite) inject(t *testing.T, ctx context.Context, f func(ctx context.Context)) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(ctx)
	}()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// stopProcess stops a cluster process with sig, and with SIGKILL if it outlives 5 s (the API
// server may take 20 s and more to drain on SIGTERM); it says how the process ended.
func stopProcess(dir, name string, sig syscall.Signal) (string, error) {
	began := time.Now()
	err := devcluster.Kill(dir, name, sig, 5*time.Second)
	if err == nil || sig == syscall.SIGKILL {
		return fmt.Sprintf("%s %s (gone in %s)", name, signalName(sig), time.Since(began).Round(100*time.Millisecond)), err
	}
	return fmt.Sprintf("%s SIGTERM, SIGKILL after 5s", name), devcluster.Kill(dir, name, syscall.SIGKILL, 10*time.Second)
}

func signalName(sig syscall.Signal) string {
	if sig == syscall.SIGKILL {
		return "SIGKILL"
	}
	return "SIGTERM"
}

// between draws a duration in [lo, hi).
func between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}

// stopControlPlane stops kube-apiserver with apiSig and etcd with etcdSig, leaves them down for
// down and starts them again; it says how each stopped and how long the API was away (ok false:
// a restart failed, reported).
func (s *suite) stopControlPlane(t *testing.T, apiSig, etcdSig syscall.Signal, down time.Duration) (how string, back time.Duration, ok bool) {
	began := time.Now()
	var stops []string
	for _, p := range []struct {
		name string
		sig  syscall.Signal
	}{{devcluster.APIServerProcess, apiSig}, {devcluster.EtcdProcess, etcdSig}} {
		h, err := stopProcess(s.cl.Dir, p.name, p.sig)
		if err != nil {
			t.Errorf("stopping %s: %v", p.name, err)
		}
		stops = append(stops, h)
	}
	time.Sleep(down)
	rctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, name := range []string{devcluster.EtcdProcess, devcluster.APIServerProcess} {
		if err := devcluster.Restart(rctx, s.cl.Dir, name); err != nil {
			t.Errorf("restarting %s: %v", name, err)
			return "", 0, false
		}
	}
	return strings.Join(stops, ", "), time.Since(began), true
}
