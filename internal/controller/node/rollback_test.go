package node

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/dev/nodesim"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollback"
	"github.com/mco-dev/mco/internal/testenv"
)

// desiredWatcher records every desiredConfig each node of a role was ever given, through its
// own API watch, so a test can tell a node never touched from one moved and moved back.
type desiredWatcher struct {
	mu   sync.Mutex
	seen map[string]map[string]bool
}

func watchDesired(t *testing.T, ctx context.Context, role string) *desiredWatcher {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: k8sClient.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &corev1.NodeList{}, client.HasLabels{roleLabel(role)})
	if err != nil {
		t.Fatal(err)
	}
	dw := &desiredWatcher{seen: map[string]map[string]bool{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if n, ok := ev.Object.(*corev1.Node); ok {
				dw.mu.Lock()
				if dw.seen[n.Name] == nil {
					dw.seen[n.Name] = map[string]bool{}
				}
				dw.seen[n.Name][n.Annotations[protocol.DesiredConfigAnnotation]] = true
				dw.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { w.Stop(); <-done })
	return dw
}

func (dw *desiredWatcher) given(node, config string) bool {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	return dw.seen[node][config]
}

// spec.onFailure: Rollback: a node failing its update to the new config rolls the pool back
// once; with the target pointed back (the render controller's part, done here by hand as in
// the other tests), the failed node is retargeted, the updated one returns, the untouched one
// is never given the failed config, the pacing entry says RolledBack, and the completed undo
// records the failed config as the previous one.
func TestOnFailureRollback(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pacingClock.SetTime(time.Date(2026, 6, 13, 14, 0, 0, 0, time.UTC))
	const role, oldCfg, newCfg = "undo-fail", "rendered-undo-fail-a", "rendered-undo-fail-b"
	dw := watchDesired(t, ctx, role)
	nodes := pacedPool(t, ctx, role, 3, 1, oldCfg)
	newPolicy(t, ctx, role, role, func(s *rolloutv1.MachineConfigPoolRolloutSpec) { s.OnFailure = rolloutv1.FailureRollback })

	// The second node in candidate order fails: its agent reports as a node that reverted a
	// broken boot does.
	const why = "NodeBootFailed: the kubelet was not healthy within 2m0s of booting " + newCfg + "; reverted to " + oldCfg
	agent.Fail(nodes[1], why)
	defer agent.Heal(nodes[1])
	setTarget(t, ctx, role, newCfg)
	pool := waitPool(t, ctx, role, "the rollback annotation", 60*time.Second, func(p *mcfgv1.MachineConfigPool) bool {
		_, ok := p.Annotations[rolloutv1.RollbackAnnotation]
		return ok
	})
	rb, err := rollback.Of(pool)
	if err != nil {
		t.Fatal(err)
	}
	if rb.From != newCfg || rb.To != oldCfg || rb.By != "spec.onFailure of mcprollout/"+role || !strings.Contains(rb.Reason, "node "+nodes[1]+" failed to update to "+newCfg+": "+why) {
		t.Fatalf("rollback %+v, want %s to %s by the policy naming %s and its reason", *rb, newCfg, oldCfg, nodes[1])
	}
	if !dw.given(nodes[0], newCfg) {
		t.Fatalf("node %s was not updated first", nodes[0])
	}

	setTarget(t, ctx, role, oldCfg) // the render controller follows the hold
	agent.Heal(nodes[1])
	waitPool(t, ctx, role, "every node back on "+oldCfg, 60*time.Second, updatedTo(oldCfg, 3))
	if dw.given(nodes[2], newCfg) {
		t.Errorf("node %s, untouched by the failed rollout, was given %s", nodes[2], newCfg)
	}
	waitEntry(t, ctx, role, role, "RolledBack", phase(rolloutv1.PhaseRolledBack, "held on "+oldCfg+": "+newCfg+" was rolled back by spec.onFailure of mcprollout/"+role))

	// Written once: the annotation is the first one, not rewritten by later reconciles.
	again := getPool(t, ctx, role)
	if again.Annotations[rolloutv1.RollbackAnnotation] != pool.Annotations[rolloutv1.RollbackAnnotation] {
		t.Errorf("rollback rewritten: %s, was %s", again.Annotations[rolloutv1.RollbackAnnotation], pool.Annotations[rolloutv1.RollbackAnnotation])
	}
	// status.configuration never left oldCfg (the failed rollout did not complete), so there is
	// no previous configuration to record.
	if prev := again.Annotations[rolloutv1.PreviousConfigurationAnnotation]; prev != "" {
		t.Errorf("previous configuration %q after a rollout that never completed", prev)
	}

	// The bad MachineConfig is deleted: the newest render is oldCfg again and the render
	// controller removes the annotation, changing neither the pool's spec nor its labels. The
	// entry must leave RolledBack all the same (it stayed so until some node changed).
	ended := again.DeepCopy()
	delete(ended.Annotations, rolloutv1.RollbackAnnotation)
	if err := k8sClient.Patch(ctx, ended, client.MergeFrom(again)); err != nil {
		t.Fatal(err)
	}
	waitEntry(t, ctx, role, role, "Done once the hold ended", phase(rolloutv1.PhaseDone, ""))
}

// A completed rollout records the config every node ran before it, once.
func TestPreviousConfigurationRecorded(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const role, oldCfg, newCfg = "undo-history", "rendered-undo-history-a", "rendered-undo-history-b"
	mu := intstr.FromInt32(2)
	newPool(t, ctx, role, role, oldCfg, &mu)
	createNodes(t, ctx, role, 2, oldCfg, map[string]string{roleLabel(role): ""})
	waitPool(t, ctx, role, "nodes on the old config", 30*time.Second, updatedTo(oldCfg, 2))
	if prev := getPool(t, ctx, role).Annotations[rolloutv1.PreviousConfigurationAnnotation]; prev != "" {
		t.Fatalf("previous configuration %q on a pool whose first config is its only one", prev)
	}
	setTarget(t, ctx, role, newCfg)
	p := waitPool(t, ctx, role, "updated to the new config", 30*time.Second, updatedTo(newCfg, 2))
	if prev := p.Annotations[rolloutv1.PreviousConfigurationAnnotation]; prev != oldCfg {
		t.Errorf("previous configuration %q, want %s", prev, oldCfg)
	}
}

func getPool(t *testing.T, ctx context.Context, name string) *mcfgv1.MachineConfigPool {
	t.Helper()
	p := &mcfgv1.MachineConfigPool{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// A canary failing the health gate during its soak rolls the pool back under
// spec.onFailure: Rollback, naming the node; the nodes after the canary are never started.
func TestOnFailureRollbackHealthGate(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pacingClock.SetTime(time.Date(2026, 6, 13, 14, 0, 0, 0, time.UTC))
	const role, oldCfg, newCfg = "undo-gate", "rendered-undo-gate-a", "rendered-undo-gate-b"
	nodes := pacedPool(t, ctx, role, 3, 1, oldCfg)
	newPolicy(t, ctx, role, role, func(s *rolloutv1.MachineConfigPoolRolloutSpec) {
		s.Canary = &rolloutv1.Canary{Nodes: intstr.FromInt32(1)}
		s.Soak = metav1.Duration{Duration: time.Hour}
		s.OnFailure = rolloutv1.FailureRollback
	})
	setTarget(t, ctx, role, newCfg)
	waitEntry(t, ctx, role, role, "the canary soaking", phase(rolloutv1.PhaseCanary, "canary done"))
	canary := ""
	for _, name := range nodes {
		if getNode(t, ctx, name).Annotations[protocol.DesiredConfigAnnotation] == newCfg {
			canary = name
		}
	}
	if err := nodesim.SetReady(ctx, k8sClient, getNode(t, ctx, canary), false); err != nil {
		t.Fatal(err)
	}
	pool := waitPool(t, ctx, role, "the rollback annotation", 30*time.Second, func(p *mcfgv1.MachineConfigPool) bool {
		_, ok := p.Annotations[rolloutv1.RollbackAnnotation]
		return ok
	})
	rb, err := rollback.Of(pool)
	if err != nil {
		t.Fatal(err)
	}
	if rb.From != newCfg || rb.To != oldCfg || !strings.HasPrefix(rb.Reason, "health gate: node "+canary+" not Ready since ") {
		t.Errorf("rollback %+v, want %s to %s for the canary failing the gate", *rb, newCfg, oldCfg)
	}
	if got := targeted(t, ctx, nodes, newCfg); got != 1 {
		t.Errorf("%d nodes given %s, want the canary alone", got, newCfg)
	}
}
