package daemon_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/daemon/reboot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// nodeRequests lets a test act at the moment an agent sends a request about its Node, before
// the API server sees it (as a node controller writing at that instant would), and see the
// answer.
type nodeRequests struct {
	node string
	// before runs before a request about the Node is sent; body is the request's body.
	before func(method, body string)
	// after runs once the API server answered it.
	after func(method, body string, status int)
}

func (h *nodeRequests) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.URL.Path != "/api/v1/nodes/"+h.node {
			return rt.RoundTrip(req)
		}
		var body []byte
		if req.Body != nil {
			body, _ = io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		if h.before != nil {
			h.before(req.Method, string(body))
		}
		resp, err := rt.RoundTrip(req)
		if err == nil && h.after != nil {
			h.after(req.Method, string(body), resp.StatusCode)
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// setDesired points the Node at config from inside a request hook, where t.Fatal must not run.
func setDesired(t *testing.T, ctx context.Context, name, config string) {
	n := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
		t.Error(err)
		return
	}
	patch := client.MergeFrom(n.DeepCopy())
	n.Annotations[protocol.DesiredConfigAnnotation] = config
	if err := env.Client.Patch(ctx, n, patch); err != nil {
		t.Error(err)
	}
}

// startAgentThrough is startAgent with every request of the agent passing h.
func startAgentThrough(t *testing.T, name, root string, h *nodeRequests) *agent {
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(h.wrap)
	ag := &agent{name: name, root: root, sd: &liveSystemd{Systemctl: systemd.New(root)}, done: make(chan struct{})}
	parent, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(ag.done)
		for parent.Err() == nil {
			ctx, stop := context.WithCancel(parent)
			opts := daemon.Options{NodeName: name, Root: root, DriftInterval: time.Second, Systemd: ag.sd,
				Rebooter: reboot.Func(func(context.Context, string) error {
					_ = os.Remove(filepath.Join(root, daemon.RebootPendingPath))
					ag.reboots.Add(1)
					stop()
					return nil
				})}
			if err := daemon.Run(ctx, cfg, opts); err != nil && parent.Err() == nil {
				t.Errorf("agent %s: %v", name, err)
				time.Sleep(time.Second)
			}
			stop()
		}
	}()
	t.Cleanup(func() { cancel(); <-ag.done })
	return ag
}

// TestSupersededBeforeTheDrainRequest: the node's target is replaced while its agent plans,
// just before it asks for the drain (what the node controller does for a superseded target).
// The agent's drain request does not land; it plans the newer config and asks for that drain
// instead: the node is drained once, for the config it then writes, and reboots once.
func TestSupersededBeforeTheDrainRequest(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const name = "supersede-before-drain"
	r0 := machineConfig("rendered-superseded-early-0", map[string]string{"/etc/base.conf": "base"})
	partial := machineConfig("rendered-superseded-early-partial", map[string]string{"/etc/base.conf": "base", "/etc/step.conf": "partial"})
	full := machineConfig("rendered-superseded-early-full", map[string]string{"/etc/base.conf": "base", "/etc/step.conf": "full", "/etc/full.conf": "x"})
	createConfigs(t, ctx, r0, partial, full)
	root := newRoot(t)
	provision(t, root, r0)
	createBareNode(t, ctx, name)

	var moved atomic.Bool
	var mu sync.Mutex
	var landed []string // drain requests the API server accepted
	h := &nodeRequests{node: name,
		before: func(method, body string) {
			if method == http.MethodPatch && strings.Contains(body, protocol.DrainRequest(partial.Name)) && !moved.Swap(true) {
				setDesired(t, ctx, name, full.Name)
			}
		},
		after: func(method, body string, status int) {
			for _, cfg := range []string{partial.Name, full.Name} {
				if method == http.MethodPatch && strings.Contains(body, protocol.DrainRequest(cfg)) && status < 300 {
					mu.Lock()
					landed = append(landed, protocol.DrainRequest(cfg))
					mu.Unlock()
				}
			}
		}}
	ag := startAgentThrough(t, name, root, h)
	awaitNode(t, ctx, name, "Done in "+r0.Name, doneIn(r0.Name))
	annotate(t, ctx, name, map[string]string{protocol.DesiredConfigAnnotation: partial.Name})

	n := awaitNode(t, ctx, name, "Done in "+full.Name, doneIn(full.Name))
	if !moved.Load() {
		t.Fatalf("the agent never asked for a drain for %s; the test did not supersede it", partial.Name)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := protocol.DrainRequest(full.Name); len(landed) != 1 || landed[0] != want {
		t.Errorf("drain requests written: %v; want only %s (the superseded target's must not land)", landed, want)
	}
	if got := ag.reboots.Load(); got != 1 {
		t.Errorf("rebooted %d times, want 1", got)
	}
	if n.Annotations[protocol.LastAppliedDrainAnnotation] != protocol.UncordonRequest(full.Name) {
		t.Errorf("not uncordoned after the update: %s", nodeSummary(n))
	}
	mustContain(t, root, "/etc/step.conf", "full")
}

// TestSupersededAfterTheDrain: the node was drained for its target, which is replaced right
// before the agent's first write. The agent writes nothing of the superseded config; it moves
// to the newer one under the drain already in effect (no second drain), and reboots once.
func TestSupersededAfterTheDrain(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const name = "supersede-after-drain"
	r0 := machineConfig("rendered-superseded-late-0", map[string]string{"/etc/base.conf": "base"})
	partial := machineConfig("rendered-superseded-late-partial", map[string]string{"/etc/base.conf": "base", "/etc/step.conf": "partial"})
	full := machineConfig("rendered-superseded-late-full", map[string]string{"/etc/base.conf": "base", "/etc/step.conf": "full", "/etc/full.conf": "x"})
	createConfigs(t, ctx, r0, partial, full)
	root := newRoot(t)
	provision(t, root, r0)
	createBareNode(t, ctx, name)

	var drainAsked, moved atomic.Bool
	var drainsForFull atomic.Int32
	h := &nodeRequests{node: name,
		before: func(method, body string) {
			switch {
			case method == http.MethodPatch && strings.Contains(body, protocol.DrainRequest(partial.Name)):
				drainAsked.Store(true)
			case method == http.MethodPatch && strings.Contains(body, protocol.DrainRequest(full.Name)):
				drainsForFull.Add(1)
			case method == http.MethodGet && drainAsked.Load() && !moved.Swap(true):
				// Its first read of the Node after asking for the drain: once the drain is
				// acknowledged, the last look before it writes.
				n := &corev1.Node{}
				if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, n); err != nil || n.Annotations[protocol.LastAppliedDrainAnnotation] != protocol.DrainRequest(partial.Name) {
					t.Errorf("the agent read its Node before its drain was acknowledged: %s (%v)", nodeSummary(n), err)
				}
				setDesired(t, ctx, name, full.Name)
			}
		}}
	ag := startAgentThrough(t, name, root, h)
	awaitNode(t, ctx, name, "Done in "+r0.Name, doneIn(r0.Name))
	annotate(t, ctx, name, map[string]string{protocol.DesiredConfigAnnotation: partial.Name})

	n := awaitNode(t, ctx, name, "Done in a new config", func(a map[string]string) bool {
		return a[protocol.StateAnnotation] == string(protocol.NodeDone) && a[protocol.CurrentConfigAnnotation] != r0.Name
	})
	if !moved.Load() {
		t.Fatalf("the agent did not read its Node before writing, so it wrote the superseded %s: %s", partial.Name, nodeSummary(n))
	}
	if got := n.Annotations[protocol.CurrentConfigAnnotation]; got != full.Name {
		t.Fatalf("Done in %s, want %s", got, full.Name)
	}
	if got := drainsForFull.Load(); got != 0 {
		t.Errorf("asked %d times for a drain for %s though the node was drained already", got, full.Name)
	}
	if got := ag.reboots.Load(); got != 1 {
		t.Errorf("rebooted %d times, want 1 (the superseded config was written and rebooted for?)", got)
	}
	if n.Annotations[protocol.LastAppliedDrainAnnotation] != protocol.UncordonRequest(full.Name) || node(t, ctx, name).Spec.Unschedulable {
		t.Errorf("not uncordoned after the update: %s", nodeSummary(n))
	}
	mustContain(t, root, "/etc/step.conf", "full")
}
