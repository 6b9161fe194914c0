package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/dev/machine"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
)

// networkCut: once the rollout (a file and a kernel argument: one reboot a node, one node at a
// time) is under way, the node whose agent has begun its update is cut off the network, from
// the API server, the other machines and the Machine Config Server alike, at a moment drawn
// from the seed, for 20-45 s (drawn), then connected again. Its machine runs on: the agent
// goes on with what it can do without the API server, and its connections hang as in a real
// partition. The node must end on the target having booted exactly once for it, with every
// file and kernel argument in place and nothing of a removed config (verify), and the pool
// Updated, as if nothing happened.
func (s *suite) networkCut(t *testing.T, ctx context.Context, r *round) {
	s.setLimit(t, ctx, r, 1)
	boots := map[string]int{}
	for _, n := range s.nodes {
		boots[n] = s.cl.Boots(t, n)
	}
	s.change(t, ctx, r, true)
	victim := ""
	stop := s.inject(t, ctx, func(ctx context.Context) {
		for victim == "" {
			if !clustertest.Sleep(ctx, 100*time.Millisecond) {
				return
			}
			victim = s.working(ctx)
		}
		if !clustertest.Sleep(ctx, between(r.rng, 0, 2*time.Second)) {
			return
		}
		var n corev1.Node
		_ = s.cl.C.Get(ctx, client.ObjectKey{Name: victim}, &n)
		if err := devcluster.CutOff(s.cl.Dir, victim, true); err != nil {
			t.Errorf("cutting %s off: %v", victim, err)
			return
		}
		// Whatever ends the round, the machine is connected again.
		defer func() {
			if err := devcluster.CutOff(s.cl.Dir, victim, false); err != nil {
				t.Errorf("connecting %s again: %v", victim, err)
			}
		}()
		cut := time.Now()
		r.faults.add(cut, fmt.Sprintf("%s cut off the network in the middle of its update (its agent's state: %s, unschedulable: %t)",
			victim, n.Annotations[protocol.StateAnnotation], n.Spec.Unschedulable))
		clustertest.Sleep(ctx, between(r.rng, 20*time.Second, 45*time.Second))
		if err := devcluster.CutOff(s.cl.Dir, victim, false); err != nil {
			t.Errorf("connecting %s again: %v", victim, err)
			return
		}
		r.faults.add(time.Now(), fmt.Sprintf("%s connected again after %s", victim, time.Since(cut).Round(100*time.Millisecond)))
	})
	s.settle(t, ctx, r, stop)
	if victim == "" {
		t.Fatal("no node was seen working on its update")
	}
	for _, n := range s.nodes {
		if got := s.cl.Boots(t, n) - boots[n]; got != 1 {
			t.Errorf("%s booted %d times for one kernel argument change, want once (the cut-off node: %s)", n, got, victim)
		}
	}
}

// working names a worker whose agent has begun its update (state Working), or "".
func (s *suite) working(ctx context.Context) string {
	var nodes corev1.NodeList
	if s.cl.C.List(ctx, &nodes, client.HasLabels{clustertest.WorkerSelector}) != nil {
		return ""
	}
	for _, n := range nodes.Items {
		if protocol.NodeState(n.Annotations[protocol.StateAnnotation]) == protocol.NodeWorking && slices.Contains(s.nodes, n.Name) {
			return n.Name
		}
	}
	return ""
}

// serverDownJoin: the Machine Config Server becomes unreachable (api-int and its machine's own
// address drop its port; its process runs on), two new machines are booted into the pool, and
// the server comes back 30-60 s later (drawn from the seed). Both machines' Ignition must have
// retried until then, joined, and come up Done on the pool's config, each fetching its config
// from its own address (the server's log) without ever being refused by the per-address rate
// limit; a refusal of one of them is audited with its address. The suite then goes back to its
// size: the extra machines are powered off and their Nodes deleted, as a scale-down does.
func (s *suite) serverDownJoin(t *testing.T, ctx context.Context, r *round) {
	if err := devcluster.ServerDown(s.cl.Dir, true); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	up := make(chan error, 1)
	outage := between(r.rng, 30*time.Second, 60*time.Second)
	var back time.Time
	go func() {
		clustertest.Sleep(ctx, outage)
		err := devcluster.ServerDown(s.cl.Dir, false)
		back = time.Now()
		up <- err
	}()
	t.Cleanup(func() { _ = devcluster.ServerDown(s.cl.Dir, false) })
	const joining = 2
	names, err := devcluster.JoinMany(ctx, s.cl.Dir, protocol.WorkerPool, testenv.ToolsDir(), testenv.RequireMCO(t), joining)
	if err := <-up; err != nil {
		t.Fatalf("bringing the server back: %v", err)
	}
	if err != nil {
		t.Fatalf("joining %v while the server was down for %s: %v", names, outage.Round(time.Second), err)
	}
	joined := time.Since(down)
	s.nodes = append(s.nodes, names...)
	if _, _, err := s.waitSettled(ctx, 3*time.Minute); err != nil {
		t.Fatalf("the joined machines %v never came up Done on the pool's config: %v", names, err)
	}
	line := fmt.Sprintf("chaos: test=%s round=%d/%d server down %s, %d machines joined %s after it went down",
		r.test, r.n, s.rounds, outage.Round(time.Second), joining, joined.Round(100*time.Millisecond))
	s.figures = append(s.figures, line)
	t.Log(line)

	logs, err := clustertest.Run(ctx, testenv.RequireTool(t, "kubectl"), "--kubeconfig", filepath.Join(s.cl.Dir, "kubeconfig"),
		"logs", "-n", devcluster.ServerNamespace, "daemonset/mco-server")
	if err != nil {
		t.Fatalf("the server's log: %v", err)
	}
	for _, name := range names {
		addr, err := s.nodeAddress(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		served, refused := 0, 0
		for _, line := range strings.Split(string(logs), "\n") {
			if !strings.Contains(line, `"client":"`+addr+`:`) {
				continue
			}
			switch {
			case strings.Contains(line, `"msg":"served config"`) && strings.Contains(line, `"code":200`):
				served++
				switch at := logTime(line); {
				case at.IsZero():
					t.Errorf("the server's log line has no time to check against the outage: %s", line)
				case at.Before(back.Add(-time.Second)):
					t.Errorf("%s was served at %s, while the server was unreachable (until %s): %s", name, at, back, line)
				}
			case strings.Contains(line, "rate limited"):
				refused++
			}
		}
		if served == 0 {
			t.Errorf("the server's log has no config served to %s from its own address %s", name, addr)
		}
		if refused > 0 {
			t.Errorf("the server rate-limited %s (%s) %d times while it retried", name, addr, refused)
		}
	}

	// A refusal is audited with the address of the machine that asked: from the first joined
	// machine, a config request with a made-up token through api-int.
	asker := names[0]
	addr, err := s.nodeAddress(ctx, asker)
	if err != nil {
		t.Fatal(err)
	}
	st, err := devcluster.LoadState(s.cl.Dir)
	if err != nil {
		t.Fatal(err)
	}
	code, err := s.cl.Output(ctx, asker, "curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}",
		"-H", "Authorization: Bearer made-up", "https://"+st.ServerHost()+"/config/worker")
	if err != nil || strings.TrimSpace(code) != "403" {
		t.Fatalf("from %s, a config request with a made-up token: %q %v, want 403", asker, code, err)
	}
	if err := clustertest.WaitFor(ctx, 30*time.Second, func() bool {
		logs, err := clustertest.Run(ctx, testenv.RequireTool(t, "kubectl"), "--kubeconfig", filepath.Join(s.cl.Dir, "kubeconfig"),
			"logs", "-n", devcluster.ServerNamespace, "daemonset/mco-server", "--since=1m")
		if err != nil {
			return false
		}
		for _, line := range strings.Split(string(logs), "\n") {
			if strings.Contains(line, `"audit":true`) && strings.Contains(line, `"client":"`+addr+`:`) {
				return true
			}
		}
		return false
	}); err != nil {
		t.Errorf("the server's audit log has no refusal from %s's address %s: %v", asker, addr, err)
	}

	// Back to the suite's size, as a scale-down.
	for len(s.nodes) > machines {
		gone := s.nodes[len(s.nodes)-1]
		if err := machine.Stop(s.cl.MachineDir(gone), 20*time.Second); err != nil {
			t.Fatalf("powering %s off: %v", gone, err)
		}
		var n corev1.Node
		n.Name = gone
		if err := s.cl.C.Delete(ctx, &n); err != nil {
			t.Fatalf("deleting Node %s: %v", gone, err)
		}
		s.nodes = s.nodes[:len(s.nodes)-1]
	}
}

// nodeAddress is the InternalIP node name registered.
func (s *suite) nodeAddress(ctx context.Context, name string) (string, error) {
	var n corev1.Node
	if err := s.cl.C.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
		return "", err
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address, nil
		}
	}
	return "", fmt.Errorf("node %s has no InternalIP", name)
}

// logTime is the time of a JSON log line ("time":"<RFC 3339>"), or zero.
func logTime(line string) time.Time {
	_, rest, ok := strings.Cut(line, `"time":"`)
	if !ok {
		return time.Time{}
	}
	v, _, _ := strings.Cut(rest, `"`)
	at, _ := time.Parse(time.RFC3339Nano, v)
	return at
}
