package node

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/dev/nodesim"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
)

func roleLabel(role string) string { return "node-role.kubernetes.io/" + role }

// newPool creates a pool selecting nodes labelled with role, already targeting config (as the
// render controller, not running here, would have set it).
func newPool(t *testing.T, ctx context.Context, name, role, config string, maxUnavailable *intstr.IntOrString) *mcfgv1.MachineConfigPool {
	t.Helper()
	p := &mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: mcfgv1.MachineConfigPoolSpec{
			MachineConfigSelector: &metav1.LabelSelector{MatchLabels: map[string]string{protocol.RoleLabel: role}},
			NodeSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{roleLabel(role): ""}},
			MaxUnavailable:        maxUnavailable,
		},
	}
	p.Spec.Configuration.Name = config
	if err := k8sClient.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func createNodes(t *testing.T, ctx context.Context, prefix string, n int, config string, labels map[string]string) []string {
	t.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("%s-%02d", prefix, i)
		if _, err := nodesim.CreateNode(ctx, k8sClient, name, config, labels); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

func setTarget(t *testing.T, ctx context.Context, pool, config string) {
	t.Helper()
	editPool(t, ctx, pool, func(p *mcfgv1.MachineConfigPool) { p.Spec.Configuration.Name = config })
}

func editPool(t *testing.T, ctx context.Context, pool string, edit func(*mcfgv1.MachineConfigPool)) {
	t.Helper()
	p := &mcfgv1.MachineConfigPool{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: pool}, p); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(p.DeepCopy())
	edit(p)
	if err := k8sClient.Patch(ctx, p, patch); err != nil {
		t.Fatal(err)
	}
}

// waitPool polls the pool until cond holds.
func waitPool(t *testing.T, ctx context.Context, pool, what string, timeout time.Duration, cond func(*mcfgv1.MachineConfigPool) bool) *mcfgv1.MachineConfigPool {
	t.Helper()
	var p mcfgv1.MachineConfigPool
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: pool}, &p); err == nil && cond(&p) {
			return &p
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("pool %s: timed out waiting for %s; status %+v", pool, what, p.Status)
	return nil
}

func updatedTo(config string, machines int32) func(*mcfgv1.MachineConfigPool) bool {
	return func(p *mcfgv1.MachineConfigPool) bool {
		return poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolUpdated) &&
			p.Status.Configuration.Name == config && p.Status.UpdatedMachineCount == machines && p.Status.MachineCount == machines
	}
}

func getNode(t *testing.T, ctx context.Context, name string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
		t.Fatal(err)
	}
	return n
}

// unavailabilityWatcher watches the nodes of one role through its own API watch, independent of
// the controllers' caches, and records the most nodes ever unavailable at once. Events of one
// resource arrive in resourceVersion order, so after each event its map is the cluster's state
// at that version.
type unavailabilityWatcher struct {
	mu      sync.Mutex
	nodes   map[string]*corev1.Node
	maxSeen int
	events  int
	done    chan struct{}
}

func watchUnavailable(t *testing.T, ctx context.Context, role string) *unavailabilityWatcher {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: k8sClient.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &corev1.NodeList{}, client.HasLabels{roleLabel(role)})
	if err != nil {
		t.Fatal(err)
	}
	uw := &unavailabilityWatcher{nodes: map[string]*corev1.Node{}, done: make(chan struct{})}
	go func() {
		defer close(uw.done)
		for ev := range w.ResultChan() {
			n, ok := ev.Object.(*corev1.Node)
			if !ok {
				continue
			}
			uw.mu.Lock()
			if ev.Type == watch.Deleted {
				delete(uw.nodes, n.Name)
			} else {
				uw.nodes[n.Name] = n
			}
			uw.events++
			uw.maxSeen = max(uw.maxSeen, uw.unavailableLocked())
			uw.mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); <-uw.done })
	return uw
}

// unavailableLocked counts by the definition in the issue, written out here rather than taken
// from the code under test: not Ready, cordoned, updating (current != desired, or not Done) or
// failing.
func (uw *unavailabilityWatcher) unavailableLocked() int {
	count := 0
	for _, n := range uw.nodes {
		ready := false
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = c.Status == corev1.ConditionTrue
			}
		}
		a := n.Annotations
		state := a[protocol.StateAnnotation]
		if !ready || n.Spec.Unschedulable || a[protocol.CurrentConfigAnnotation] != a[protocol.DesiredConfigAnnotation] ||
			(state != "" && state != string(protocol.NodeDone)) {
			count++
		}
	}
	return count
}

func (uw *unavailabilityWatcher) max() (int, int) {
	uw.mu.Lock()
	defer uw.mu.Unlock()
	return uw.maxSeen, uw.events
}
