package node

import (
	"context"
	"sync"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/dev/nodesim"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestNodeBootedIntoCustomPool: a machine that booted from /config/boot-infra registers with
// only the worker role, as a kubelet does, and its agent seeds firstPivotConfig with
// boot-infra's rendered config. The controller gives it boot-infra's labels once; the worker
// pool never counts or targets it, and boot-infra counts it. A node whose labels put it in
// another custom pool is held out of both and reported until an admin settles it.
func TestNodeBootedIntoCustomPool(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	worker := ensureWorkerPool(t, ctx)
	infra := newPool(t, ctx, "boot-infra", "boot-infra", "rendered-boot-infra-1", nil)
	newPool(t, ctx, "boot-gpu", "boot-gpu", "rendered-boot-gpu-1", nil)
	createRenderedFor(t, ctx, infra, "rendered-boot-infra-1")
	workerCount := waitPool(t, ctx, protocol.WorkerPool, "worker's status", 30*time.Second, func(p *mcfgv1.MachineConfigPool) bool {
		return p.Status.Configuration.Name == worker.Spec.Configuration.Name
	}).Status.MachineCount
	workerSeen := watchPoolCounts(t, ctx, protocol.WorkerPool)

	t.Log("a node that booted into boot-infra is labelled for it and counted there, never in worker")
	booted := watchNode(t, ctx, "booted-infra")
	createBootedNode(t, ctx, "booted-infra", "rendered-boot-infra-1", map[string]string{roleLabel("worker"): ""})
	waitPool(t, ctx, "boot-infra", "boot-infra counting the node", 30*time.Second, updatedTo("rendered-boot-infra-1", 1))
	n := getNode(t, ctx, "booted-infra")
	// Role labels have the value "": check presence, as a missing key reads "" too.
	_, settled := n.Annotations[protocol.CustomPoolLabelsAppliedAnnotation]
	if value, labelled := n.Labels[roleLabel("boot-infra")]; !settled || !labelled || value != "" {
		t.Fatalf("node not labelled for boot-infra: labels %v annotations %v", n.Labels, n.Annotations)
	}
	if _, kept := n.Labels[roleLabel("worker")]; !kept {
		t.Error("the kubelet's worker label was removed")
	}
	waitNodeEvent(t, ctx, "booted-infra", ReasonCustomPoolLabelsApplied, "Booted into pool boot-infra: labelled node-role.kubernetes.io/boot-infra=")
	desired, counts := booted.desired(), workerSeen.counts()
	if len(desired) == 0 || len(counts) == 0 {
		t.Fatalf("the watches saw nothing (desired %v, worker counts %v): they cannot have watched the join", desired, counts)
	}
	for _, d := range desired {
		if d != "rendered-boot-infra-1" {
			t.Errorf("the node was targeted at %s", d)
		}
	}
	for _, c := range counts {
		if c != workerCount {
			t.Errorf("worker counted %d machines; it had %d before the node joined", c, workerCount)
		}
	}

	t.Log("the labels are applied once: an admin may take them off")
	editNode(t, ctx, "booted-infra", func(n *corev1.Node) { delete(n.Labels, roleLabel("boot-infra")) })
	time.Sleep(2 * time.Second)
	if _, back := getNode(t, ctx, "booted-infra").Labels[roleLabel("boot-infra")]; back {
		t.Error("the controller labelled the node again")
	}

	t.Log("a node whose labels put it in boot-gpu is held out of both and reported")
	createBootedNode(t, ctx, "booted-twice", "rendered-boot-infra-1", map[string]string{roleLabel("worker"): "", roleLabel("boot-gpu"): ""})
	waitNodeEvent(t, ctx, "booted-twice", ReasonCustomPoolLabelsRefused, "belongs to 2 custom pools (boot-gpu, boot-infra)")
	time.Sleep(time.Second) // give a wrong controller time to count or target it
	waitPool(t, ctx, "boot-gpu", "boot-gpu not counting the held node", time.Minute, updatedTo("rendered-boot-gpu-1", 0))
	held := getNode(t, ctx, "booted-twice")
	if _, labelled := held.Labels[roleLabel("boot-infra")]; labelled || held.Annotations[protocol.DesiredConfigAnnotation] != "rendered-boot-infra-1" {
		t.Fatalf("the held node was labelled or targeted: labels %v desired %s", held.Labels, held.Annotations[protocol.DesiredConfigAnnotation])
	}

	t.Log("once an admin marks it settled, boot-gpu takes it")
	editNode(t, ctx, "booted-twice", func(n *corev1.Node) { n.Annotations[protocol.CustomPoolLabelsAppliedAnnotation] = "" })
	waitPool(t, ctx, "boot-gpu", "boot-gpu rolling its node", time.Minute, updatedTo("rendered-boot-gpu-1", 1))
}

// ensureWorkerPool returns the worker pool, created (and deleted at the end) unless another
// test left one.
func ensureWorkerPool(t *testing.T, ctx context.Context) *mcfgv1.MachineConfigPool {
	t.Helper()
	p := &mcfgv1.MachineConfigPool{}
	err := k8sClient.Get(ctx, client.ObjectKey{Name: protocol.WorkerPool}, p)
	if err == nil && p.Spec.Configuration.Name != "" {
		return p
	}
	if !apierrors.IsNotFound(err) {
		t.Fatalf("worker pool: %v", err)
	}
	p = newPool(t, ctx, protocol.WorkerPool, "worker", "rendered-worker-boot", nil)
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), p) })
	return p
}

// createRenderedFor creates a rendered config owned by pool, as the render controller does.
func createRenderedFor(t *testing.T, ctx context.Context, pool *mcfgv1.MachineConfigPool, name string) {
	t.Helper()
	mc := &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{{
		APIVersion: mcfgv1.GroupVersion.String(), Kind: "MachineConfigPool", Name: pool.Name, UID: pool.UID,
	}}}}
	mc.Spec.Config.Raw = []byte(`{"ignition":{"version":"3.5.0"}}`)
	if err := k8sClient.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), mc) })
}

// createBootedNode registers a Ready node the way a machine that booted from the server
// appears once its agent started: the kubelet's labels, and the annotations the agent seeds
// from node-annotations.json (current, desired and first config all the one it booted into).
func createBootedNode(t *testing.T, ctx context.Context, name, rendered string, labels map[string]string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{nodesim.SimulatedLabel: ""},
		Annotations: map[string]string{
			protocol.CurrentConfigAnnotation:    rendered,
			protocol.DesiredConfigAnnotation:    rendered,
			protocol.FirstPivotConfigAnnotation: rendered,
			protocol.StateAnnotation:            string(protocol.NodeDone),
		}}}
	for k, v := range labels {
		n.Labels[k] = v
	}
	if err := k8sClient.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), n) })
	if err := nodesim.SetReady(ctx, k8sClient, n, true); err != nil {
		t.Fatal(err)
	}
}

func editNode(t *testing.T, ctx context.Context, name string, edit func(*corev1.Node)) {
	t.Helper()
	n := getNode(t, ctx, name)
	patch := client.MergeFrom(n.DeepCopy())
	edit(n)
	if err := k8sClient.Patch(ctx, n, patch); err != nil {
		t.Fatal(err)
	}
}

// seenValues records what a watch saw, independent of the controllers' caches.
type seenValues struct {
	mu     sync.Mutex
	values []string
	ints   []int32
}

func (s *seenValues) desired() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.values...)
}

func (s *seenValues) counts() []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int32(nil), s.ints...)
}

// watchNode records every desiredConfig the node has from before it exists.
func watchNode(t *testing.T, ctx context.Context, name string) *seenValues {
	t.Helper()
	s := &seenValues{}
	testenv.WatchNamed(t, ctx, env.Config, k8sClient.Scheme(), &corev1.NodeList{}, name, func(obj client.Object) {
		if d := obj.GetAnnotations()[protocol.DesiredConfigAnnotation]; d != "" {
			s.mu.Lock()
			s.values = append(s.values, d)
			s.mu.Unlock()
		}
	})
	return s
}

// watchPoolCounts records every status.machineCount of a pool from now on.
func watchPoolCounts(t *testing.T, ctx context.Context, pool string) *seenValues {
	t.Helper()
	s := &seenValues{}
	testenv.WatchNamed(t, ctx, env.Config, k8sClient.Scheme(), &mcfgv1.MachineConfigPoolList{}, pool, func(obj client.Object) {
		if p, ok := obj.(*mcfgv1.MachineConfigPool); ok {
			s.mu.Lock()
			s.ints = append(s.ints, p.Status.MachineCount)
			s.mu.Unlock()
		}
	})
	return s
}
