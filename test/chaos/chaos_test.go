package chaos

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/dev/machine"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/test/clustertest"
)

const (
	// RoundsEnv is how many rounds each test runs (default 1, the short form `make test` runs).
	RoundsEnv = "MCO_CHAOS_ROUNDS"
	// SeedEnv fixes the seed every random choice is drawn from (default: the clock).
	SeedEnv = "MCO_CHAOS_SEED"
	// FaultsEnv chooses the faults: "all" (what `make chaos` runs), or names separated by
	// commas; unset, the short form `make test` runs, every fault but the long ones.
	FaultsEnv = "MCO_CHAOS_FAULTS"
	// machines: 6, so that losing one for good still leaves a rollout across 5.
	machines = 6
	// settleTimeout bounds one round's rollout, faults included. On a 2-core machine a
	// controller-kill round takes 2 min 20–35 s: its 15 SIGKILLs leave the lease held 15 s each
	// time, so for about a minute and a half no controller leads. 3 min was too tight: one
	// reboot held 90 s by a container scope that systemd did not see empty failed CI (a dev
	// machine now bounds that stop at 10 s: internal/dev/machine's shutdownBoundDropIns). The bound
	// leaves room for one shutdown that hangs until the dev machine forces it (2 min); such a
	// shutdown is recorded (shutdown_test.go), whether the round passes or not.
	settleTimeout = 5 * time.Minute
)

// TestChaos runs each fault against a rollout on one shared dev cluster, in sequence.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos: needs the dev cluster, real machines and the real binaries")
	}
	clustertest.RequireFailpoints(t) // agent-kill arms them
	rounds := 1
	if v := os.Getenv(RoundsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", RoundsEnv, v)
		}
		rounds = n
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(SeedEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an unsigned number", SeedEnv, v)
		}
		seed = n
	}
	t.Logf("chaos: seed=%d rounds=%d (replay: %s=%d %s=%d)", seed, rounds, SeedEnv, seed, RoundsEnv, rounds)
	// Every wait has its own bound; this one leaves time to dump the logs before `go test`
	// -timeout panics.
	deadline := time.Now().Add(8*time.Minute + time.Duration(rounds)*8*time.Minute)
	if d, ok := t.Deadline(); ok && d.Add(-time.Minute).Before(deadline) {
		deadline = d.Add(-time.Minute)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()

	start := time.Now()
	cl := clustertest.Start(t, ctx, machines)
	s := &suite{cl: cl, seed: seed, rounds: rounds}
	for i := range machines {
		s.nodes = append(s.nodes, fmt.Sprintf("worker-%d", i))
	}
	s.target = cl.Pool(t, ctx).Spec.Configuration.Name
	t.Logf("chaos: dev cluster of %d machines up in %s", machines, time.Since(start).Round(100*time.Millisecond))
	defer func() {
		t.Logf("chaos: summary (seed=%d rounds=%d, %s in all)\n%s\n%s", seed, rounds, time.Since(start).Round(time.Second), strings.Join(s.figures, "\n"), s.scopeStopTimeouts(ctx))
	}()

	for _, tc := range faultsToRun(t, []fault{
		{name: "controller-kill", run: s.controllerKill},
		{name: "apiserver-etcd-restart", run: s.apiServerRestart},
		{name: "agent-kill", run: s.agentKill},
		{name: "network-cut", run: s.networkCut},
		{name: "bad-config-removed", run: s.badConfig},
		{name: "node-lost", run: s.nodeLost},
		{name: "server-down-join", run: s.serverDownJoin},
		// Long (two minutes a round: the boot guard's timeout, two reboots, the pool's
		// rollback), and what it proves on the node and the pool is also proved without
		// faults by test/e2e's TestNeverStranded (boot and undo scenarios).
		{name: "broken-kubelet", run: s.brokenKubelet, long: true},
	}) {
		ok := t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(tc.index)))
			for n := 1; n <= rounds; n++ {
				r := &round{test: tc.name, n: n, rng: rng, faults: &faults{}}
				s.requireSettled(t, ctx)
				tc.run(t, ctx, r)
				if t.Failed() {
					return
				}
			}
		})
		if !ok {
			// The failure stands; the later tests still run if rebooting the nodes the failure
			// left behind brings the cluster to what the suite expects.
			healed, err := s.heal(ctx)
			if err != nil {
				t.Fatalf("chaos: stopping after %s failed (seed %d): %v", tc.name, seed, err)
			}
			t.Logf("chaos: %s failed (seed %d); rebooting %v settled the cluster, so the next tests run", tc.name, seed, healed)
		}
	}
}

// fault is one chaos test: a rollout with one kind of fault injected.
type fault struct {
	name string
	run  func(t *testing.T, ctx context.Context, r *round)
	// long faults run only when chosen (FaultsEnv), not in `make test`'s short form.
	long bool
	// index is the fault's place in the whole suite, which seeds its random choices.
	index int
}

// faultsToRun is faults as FaultsEnv chooses them, in the suite's order (a lost node stays
// lost for the faults after it), each keeping its index so its random choices replay with the
// seed whatever else runs.
func faultsToRun(t *testing.T, faults []fault) []fault {
	var chosen []fault
	v := os.Getenv(FaultsEnv)
	names := map[string]bool{}
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names[n] = true
		}
	}
	for i, f := range faults {
		if v == "all" || names[f.name] || v == "" && !f.long {
			f.index = i
			chosen = append(chosen, f)
			delete(names, f.name)
		}
	}
	delete(names, "all")
	if len(names) > 0 {
		var all []string
		for _, f := range faults {
			all = append(all, f.name)
		}
		t.Fatalf("%s=%q: no fault named %v (there are %s, or all)", FaultsEnv, v, slices.Sorted(maps.Keys(names)), strings.Join(all, ", "))
	}
	var run []string
	for _, f := range chosen {
		run = append(run, f.name)
	}
	t.Logf("chaos: faults %s (%s=all for every one)", strings.Join(run, ", "), FaultsEnv)
	return chosen
}

// suite is the shared cluster and everything the rollouts so far must have left on it.
type suite struct {
	cl     *clustertest.Cluster
	seed   uint64
	rounds int
	// nodes are the pool's machines now (a lost node leaves, a replacement joins).
	nodes []string
	// target is the rendered config the pool last settled on.
	target string
	// present are the chaos MachineConfigs in the cluster, oldest first; removed are those
	// deleted, whose files and kernel arguments must be gone from every node.
	present, removed []chaosConfig
	// extraGone are other paths no node may have (a bad config's files).
	extraGone []string
	figures   []string
	// agentKills: per machine, the agent SIGKILLs at shutdown already reported
	// (checkAgentsStopped).
	agentKills map[string]int
}

// round is one rollout of one test.
type round struct {
	test   string
	n      int
	rng    *rand.Rand
	faults *faults
	// limit is the pool's maxUnavailable for this round.
	limit int
	// config is the MachineConfig this round adds.
	config chaosConfig
	// started is when the round's change was made.
	started time.Time
}

// chaosConfig is a MachineConfig of the suite: one file whose content names the test and round,
// and optionally a kernel argument.
type chaosConfig struct {
	name, path, content, karg string
}

func (c chaosConfig) machineConfig() *mcfgv1.MachineConfig {
	mc := clustertest.FileConfig(c.name, c.path, c.content)
	if c.karg != "" {
		mc.Spec.KernelArguments = []string{c.karg}
	}
	return mc
}

// faults records what a round injected and when the last fault ended (the moment from which
// recovery is timed).
type faults struct {
	mu    sync.Mutex
	n     int
	last  time.Time
	notes []string
}

func (f *faults) add(end time.Time, note string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if end.After(f.last) {
		f.last = end
	}
	if note != "" {
		f.notes = append(f.notes, note)
	}
}

func (f *faults) get() (int, time.Time, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n, f.last, slices.Clone(f.notes)
}

// setLimit sets the worker pool's maxUnavailable.
func (s *suite) setLimit(t *testing.T, ctx context.Context, r *round, limit int) {
	t.Helper()
	p := s.cl.Pool(t, ctx)
	patch := client.MergeFrom(p.DeepCopy())
	v := intstr.FromInt32(int32(limit))
	p.Spec.MaxUnavailable = &v
	if err := s.cl.C.Patch(ctx, p, patch); err != nil {
		t.Fatal(err)
	}
	r.limit = limit
}

// change starts the round's rollout: it creates the round's MachineConfig (with a kernel
// argument if karg) and, once two or more chaos configs are present, deletes the oldest, so every
// rollout both writes a file and (mostly) removes one.
func (s *suite) change(t *testing.T, ctx context.Context, r *round, karg bool) {
	t.Helper()
	id := fmt.Sprintf("%s-%d", r.test, r.n)
	r.config = chaosConfig{
		name:    "50-chaos-" + id,
		path:    "/etc/chaos/" + id,
		content: fmt.Sprintf("chaos test %s round %d seed %d\n", r.test, r.n, s.seed),
	}
	if karg {
		r.config.karg = fmt.Sprintf("mco.chaos.%s=%d", strings.ReplaceAll(r.test, "-", "_"), r.n)
	}
	s.cl.Watcher.Reset()
	r.started = time.Now()
	if err := s.cl.C.Create(ctx, r.config.machineConfig()); err != nil {
		t.Fatal(err)
	}
	s.present = append(s.present, r.config)
	if len(s.present) > 2 {
		old := s.present[0]
		if err := s.cl.C.Delete(ctx, old.machineConfig()); err != nil {
			t.Fatal(err)
		}
		s.present = s.present[1:]
		s.removed = append(s.removed, old)
	}
}

// settle waits for the pool to finish the round's rollout, stopping the round's fault injector
// (stop, which may be nil) as soon as it did, then checks that nothing was lost and logs the
// round's figures.
func (s *suite) settle(t *testing.T, ctx context.Context, r *round, stop func()) {
	t.Helper()
	shutdowns := s.watchShutdowns(ctx)
	target, at, err := s.waitSettled(ctx, settleTimeout)
	if stop != nil {
		stop()
	}
	slow := shutdowns.stop()
	for _, rec := range slow {
		t.Logf("slow shutdown: %s", rec)
	}
	n, last, notes := r.faults.get()
	most, worst := s.cl.Watcher.MaxUnavailable()
	if err != nil {
		at = time.Now()
	}
	recover := 0 * time.Second
	if !last.IsZero() && at.After(last) {
		recover = at.Sub(last)
	}
	line := fmt.Sprintf("chaos: test=%s round=%d/%d faults=%d maxUnavailable=%d/%d recover=%s rollout=%s nodes=%d slowShutdowns=%d",
		r.test, r.n, s.rounds, n, most, r.limit, recover.Round(100*time.Millisecond), at.Sub(r.started).Round(100*time.Millisecond), len(s.nodes), len(slow))
	if err != nil {
		t.Logf("%s FAILED", line)
		for _, note := range notes {
			t.Logf("  fault: %s", note)
		}
		t.Logf("nodes now:\n%s", s.describe(ctx))
		t.Fatalf("the pool did not recover: %v; %s", err, s.pokeStuck(ctx))
	}
	s.figures = append(s.figures, line)
	t.Log(line)
	for _, note := range notes {
		t.Logf("  fault: %s", note)
	}
	if n == 0 {
		t.Errorf("no fault was injected: the rollout finished before the injector got to it")
	}
	if most > r.limit {
		t.Errorf("%d nodes were unavailable or cordoned at once (%v); maxUnavailable is %d", most, worst, r.limit)
	}
	if most == 0 {
		t.Errorf("the watcher saw no node unavailable during a rollout that reboots every node")
	}
	s.target = target
	s.verify(t, ctx)
	s.checkAgentsStopped(t, ctx)
}

// requireSettled fails unless the pool is settled on what the suite expects (the previous test
// left the cluster whole).
func (s *suite) requireSettled(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, _, err := s.waitSettled(ctx, time.Minute); err != nil {
		t.Fatalf("the cluster is not settled before the test: %v", err)
	}
}

// waitSettled polls until the worker pool targets a config rendered from exactly the present
// chaos configs (none of the removed), every node of the pool is Done on it and schedulable,
// and the pool reports them all updated, Updated and not Degraded. Errors reading are retried
// (the API server may be down); it returns the target and when it was first seen settled.
func (s *suite) waitSettled(ctx context.Context, timeout time.Duration) (string, time.Time, error) {
	var target, why string
	err := clustertest.WaitFor(ctx, timeout, func() bool {
		t, reason, err := s.settled(ctx)
		switch {
		case err != nil:
			why = err.Error()
		case reason != "":
			why = reason
		default:
			target = t
			return true
		}
		return false
	})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("not settled: %w (last: %s)", err, why)
	}
	return target, time.Now(), nil
}

// settled says why the pool is not settled ("" when it is).
func (s *suite) settled(ctx context.Context) (string, string, error) {
	var p mcfgv1.MachineConfigPool
	if err := s.cl.C.Get(ctx, client.ObjectKey{Name: protocol.WorkerPool}, &p); err != nil {
		return "", "", err
	}
	target := p.Spec.Configuration.Name
	for _, c := range s.present {
		if !clustertest.HasSource(&p, c.name) {
			return "", "target " + target + " lacks " + c.name, nil
		}
	}
	for _, c := range s.removed {
		if clustertest.HasSource(&p, c.name) {
			return "", "target " + target + " still has the deleted " + c.name, nil
		}
	}
	want := int32(len(s.nodes))
	st := p.Status
	switch {
	case st.Configuration.Name != target:
		return "", fmt.Sprintf("pool status on %s, target %s", st.Configuration.Name, target), nil
	case st.MachineCount != want || st.UpdatedMachineCount != want || st.ReadyMachineCount != want ||
		st.UnavailableMachineCount != 0 || st.DegradedMachineCount != 0:
		return "", fmt.Sprintf("pool counts machine=%d updated=%d ready=%d unavailable=%d degraded=%d, want %d updated",
			st.MachineCount, st.UpdatedMachineCount, st.ReadyMachineCount, st.UnavailableMachineCount, st.DegradedMachineCount, want), nil
	case !poolcondition.IsTrue(&st, mcfgv1.MachineConfigPoolUpdated):
		return "", "pool not Updated", nil
	}
	for _, c := range []mcfgv1.MachineConfigPoolConditionType{mcfgv1.MachineConfigPoolDegraded, mcfgv1.MachineConfigPoolNodeDegraded, mcfgv1.MachineConfigPoolRenderDegraded} {
		if cond := poolcondition.Get(&st, c); cond != nil && cond.Status == corev1.ConditionTrue {
			return "", fmt.Sprintf("pool %s: %s", c, cond.Message), nil
		}
	}
	var nodes corev1.NodeList
	if err := s.cl.C.List(ctx, &nodes, client.HasLabels{clustertest.WorkerSelector}); err != nil {
		return "", "", err
	}
	var names []string
	for i := range nodes.Items {
		n := &nodes.Items[i]
		names = append(names, n.Name)
		if why := nodeNotOn(n, target); why != "" {
			return "", why, nil
		}
	}
	slices.Sort(names)
	if want := slices.Sorted(slices.Values(s.nodes)); !slices.Equal(names, want) {
		return "", fmt.Sprintf("pool nodes %v, want %v", names, want), nil
	}
	return target, "", nil
}

// nodeNotOn says why n is not Done on target and schedulable ("" when it is).
func nodeNotOn(n *corev1.Node, target string) string {
	a := n.Annotations
	switch {
	case a[protocol.CurrentConfigAnnotation] != target || a[protocol.DesiredConfigAnnotation] != target:
		return fmt.Sprintf("%s: current %s desired %s, target %s", n.Name, a[protocol.CurrentConfigAnnotation], a[protocol.DesiredConfigAnnotation], target)
	case !rollout.Done(n):
		return fmt.Sprintf("%s: state %s %s", n.Name, a[protocol.StateAnnotation], a[protocol.ReasonAnnotation])
	case n.Spec.Unschedulable:
		return n.Name + " is cordoned"
	case !rollout.Ready(n):
		return n.Name + " is not Ready"
	}
	return ""
}

// verify checks inside every machine of the pool that each present chaos config's file has
// exactly its content and mode and its kernel argument is on the booted command line, and that
// every removed config's file and kernel argument, and every other path that must be gone, is
// gone.
func (s *suite) verify(t *testing.T, ctx context.Context) {
	t.Helper()
	var gone []string
	for _, c := range s.removed {
		gone = append(gone, c.path)
	}
	gone = append(gone, s.extraGone...)
	for _, name := range s.nodes {
		for _, c := range s.present {
			out, err := s.cl.Output(ctx, name, "stat", "-c", "%a %F", c.path)
			if got := strings.TrimSpace(out); err != nil || got != "644 regular file" {
				t.Errorf("%s: %s is %q (%v), want a regular file of mode 644", name, c.path, got, err)
				continue
			}
			if got, err := s.cl.Output(ctx, name, "cat", c.path); err != nil || got != c.content {
				t.Errorf("%s: %s = %q (%v), want %q", name, c.path, got, err, c.content)
			}
		}
		if len(gone) > 0 {
			script := `for p; do if [ -e "$p" ] || [ -L "$p" ]; then echo "$p"; fi; done`
			out, err := s.cl.Output(ctx, name, append([]string{"sh", "-c", script, "sh"}, gone...)...)
			if err != nil {
				t.Errorf("%s: checking removed files: %v", name, err)
			} else if left := strings.Fields(out); len(left) > 0 {
				t.Errorf("%s: %v should be gone", name, left)
			}
		}
		cmdline, err := s.cl.Output(ctx, name, "cat", "/proc/cmdline")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		args := strings.Fields(cmdline)
		for _, c := range s.present {
			if c.karg != "" && !slices.Contains(args, c.karg) {
				t.Errorf("%s: kernel argument %s is not on the booted command line %q", name, c.karg, cmdline)
			}
		}
		for _, c := range s.removed {
			if c.karg != "" && slices.Contains(args, c.karg) {
				t.Errorf("%s: kernel argument %s of the deleted %s is still on the command line %q", name, c.karg, c.name, cmdline)
			}
		}
	}
}

// describe is one line per pool node: config, state, cordon and drain annotations, reason.
func (s *suite) describe(ctx context.Context) string {
	var nodes corev1.NodeList
	if err := s.cl.C.List(ctx, &nodes, client.HasLabels{clustertest.WorkerSelector}); err != nil {
		return err.Error()
	}
	var lines []string
	for _, n := range nodes.Items {
		a := n.Annotations
		ready := "unknown"
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = string(c.Status)
			}
		}
		boots := "?"
		if st, err := machine.ReadStatus(s.cl.MachineDir(n.Name)); err == nil {
			boots = fmt.Sprintf("%d (%s since %s)", st.Boots, st.State, st.Since.Format("15:04:05"))
		}
		lines = append(lines, fmt.Sprintf("  %s current=%s desired=%s state=%s cordoned=%v Ready=%s desiredDrain=%s lastAppliedDrain=%s postConfigAction=%s boots=%s resourceVersion=%s reason=%q",
			n.Name, a[protocol.CurrentConfigAnnotation], a[protocol.DesiredConfigAnnotation], a[protocol.StateAnnotation],
			n.Spec.Unschedulable, ready, a[protocol.DesiredDrainAnnotation], a[protocol.LastAppliedDrainAnnotation],
			a[protocol.PostConfigActionAnnotation], boots, n.ResourceVersion, a[protocol.ReasonAnnotation]))
	}
	return strings.Join(lines, "\n")
}

// pokeStuck is a diagnosis for a rollout that did not finish: it makes a no-op change (an
// annotation no component reads) to every node that is not Done on its desired config and says
// whether the pool then settled. If it did, some component was waiting for news of a Node it had
// already been given and missed.
func (s *suite) pokeStuck(ctx context.Context) string {
	var nodes corev1.NodeList
	if err := s.cl.C.List(ctx, &nodes, client.HasLabels{clustertest.WorkerSelector}); err != nil {
		return "no diagnosis: " + err.Error()
	}
	var poked []string
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if rollout.Done(n) && !n.Spec.Unschedulable {
			continue
		}
		patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"mco.dev/chaos-poke":%q}}}`, time.Now().Format(time.RFC3339Nano)))
		if err := s.cl.C.Patch(ctx, n, client.RawPatch(types.MergePatchType, patch)); err == nil {
			poked = append(poked, n.Name)
		}
	}
	if len(poked) == 0 {
		return "diagnosis: every node is Done and schedulable; the pool status is behind"
	}
	began := time.Now()
	if _, _, err := s.waitSettled(ctx, 30*time.Second); err != nil {
		return fmt.Sprintf("diagnosis: a no-op annotation on %v did not help either (%v); their agents' goroutines:\n%s", poked, err, s.agentStacks(ctx, poked))
	}
	return fmt.Sprintf("diagnosis: the pool settled %s after a no-op annotation on %v: the agent or the controller of that node was waiting for a Node update it had missed",
		time.Since(began).Round(100*time.Millisecond), poked)
}

// heal reboots every machine whose node is unavailable or cordoned (a failure leaves such nodes
// behind; the others merely wait for their turn) and waits for the pool to settle on what the suite expects. It is not part of any test: it only
// lets the tests after a failed one start from a cluster in the expected state.
func (s *suite) heal(ctx context.Context) ([]string, error) {
	var nodes corev1.NodeList
	if err := s.cl.C.List(ctx, &nodes, client.HasLabels{clustertest.WorkerSelector}); err != nil {
		return nil, err
	}
	var rebooted []string
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if !rollout.Unavailable(n) && !n.Spec.Unschedulable {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := s.cl.Output(rctx, n.Name, "systemctl", "reboot")
		cancel()
		if err == nil {
			rebooted = append(rebooted, n.Name)
		}
	}
	if _, _, err := s.waitSettled(ctx, 2*time.Minute); err != nil {
		return rebooted, fmt.Errorf("rebooting %v did not settle the cluster: %w", rebooted, err)
	}
	return rebooted, nil
}

// agentStacks has the agents of nodes dump their goroutines (SIGQUIT: the Go runtime prints
// them and exits; the kubelet restarts the agent) and returns the dumps from their pods' logs.
func (s *suite) agentStacks(ctx context.Context, nodes []string) string {
	var b strings.Builder
	for _, name := range nodes {
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		out, err := s.cl.Output(ctx, name, "sh", "-c", `echo "committed: $(grep -o '"name":"rendered-[a-z0-9-]*"' /etc/machine-config-daemon/currentconfig | head -1)"
echo "--- agent pod's log and the reboot unit's journal (tail)"
`+devcluster.AgentLogsScript(40)+`
journalctl -u machine-config-daemon-reboot --no-pager -n 10 | grep -v 'control group'
echo "--- systemd's inhibitors, jobs and units still stopping"
systemd-inhibit --list --no-pager 2>&1 | head -10
`+stoppingUnitsScript+`
echo "--- the shutdown's targets, and what went wrong in this boot since the reboot was queued"
systemctl show -p Id,ActiveState,Result reboot.target systemd-reboot.service shutdown.target umount.target final.target --no-pager 2>&1 | paste -sd' '
since=$(journalctl -u machine-config-daemon-reboot -o short-unix --no-pager -n 1 | awk '$1 ~ /^[0-9]+[.][0-9]+$/ {split($1, t, "."); print "@" t[1]}')
journalctl -b --no-pager -p notice ${since:+--since "$since"} -n 40 2>&1 | grep -v 'control group'
pkill -QUIT -f "$1" && sleep 1 &&
`+devcluster.AgentLogsScript(2000)+` | sed -n '/^SIGQUIT/,$p'`, "sh", devcluster.AgentProcess)
		cancel()
		fmt.Fprintf(&b, "--- agent of %s (%v)\n%s\n", name, err, out)
	}
	return b.String()
}
