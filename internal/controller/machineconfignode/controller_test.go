package machineconfignode

import (
	"context"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/machineconfignode"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestLifecycle follows one Node: it gets its object when a pool selects it, the spec follows
// its desiredConfig and pool while the status (the agent's) is kept, the object comes back if
// deleted, and goes when the Node leaves its pools and when the Node goes.
func TestLifecycle(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Only this test uses the worker pool (a custom pool wins over it, not over another).
	pool(t, ctx, protocol.WorkerPool, map[string]string{"lc-role/worker": ""})
	pool(t, ctx, "lc-infra", map[string]string{"lc-role/infra": ""})
	n := node(t, ctx, "lc-0", map[string]string{"lc-role/worker": ""}, nil)

	m := await(t, ctx, "lc-0", "created", func(m *mcfgv1.MachineConfigNode) bool { return m != nil })
	wantSpec(t, m, protocol.WorkerPool, machineconfignode.NotYetSet)
	if refs := m.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Node" || refs[0].UID != n.UID {
		t.Errorf("owners %+v, want Node lc-0 (%s)", refs, n.UID)
	}

	// The agent's status, written as the agent writes it (status subresource).
	m.Status = machineconfignode.Next("lc-0", m.Status, machineconfignode.Step{Kind: machineconfignode.Done, Current: "rendered-lc-1", Desired: "rendered-lc-1"}, metav1.Now())
	if err := env.Client.Status().Update(ctx, m); err != nil {
		t.Fatal(err)
	}

	annotate(t, ctx, n, protocol.DesiredConfigAnnotation, "rendered-lc-2")
	m = await(t, ctx, "lc-0", "desired rendered-lc-2", func(m *mcfgv1.MachineConfigNode) bool {
		return m != nil && m.Spec.ConfigVersion.Desired == "rendered-lc-2"
	})
	wantSpec(t, m, protocol.WorkerPool, "rendered-lc-2")
	if m.Status.ConfigVersion == nil || m.Status.ConfigVersion.Current != "rendered-lc-1" {
		t.Errorf("the spec update lost the agent's status: %+v", m.Status)
	}

	// One custom pool wins over worker.
	label(t, ctx, n, "lc-role/infra", ptrTo(""))
	await(t, ctx, "lc-0", "moved to lc-infra", func(m *mcfgv1.MachineConfigNode) bool { return m != nil && m.Spec.Pool.Name == "lc-infra" })

	// Deleted by hand: put back.
	if err := env.Client.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
	await(t, ctx, "lc-0", "recreated", func(got *mcfgv1.MachineConfigNode) bool { return got != nil && got.UID != m.UID })

	// No pool any more: no object.
	label(t, ctx, n, "lc-role/infra", nil)
	label(t, ctx, n, "lc-role/worker", nil)
	await(t, ctx, "lc-0", "deleted with the pools gone", func(m *mcfgv1.MachineConfigNode) bool { return m == nil })

	// Back in a pool, then the Node is deleted.
	label(t, ctx, n, "lc-role/worker", ptrTo(""))
	await(t, ctx, "lc-0", "created again", func(m *mcfgv1.MachineConfigNode) bool { return m != nil })
	if err := env.Client.Delete(ctx, n); err != nil {
		t.Fatal(err)
	}
	await(t, ctx, "lc-0", "deleted with its Node", func(m *mcfgv1.MachineConfigNode) bool { return m == nil })
}

// TestNodesWithoutAnObject: Windows nodes, nodes no pool selects and nodes two custom pools
// select have none; a pool created later brings them in.
func TestNodesWithoutAnObject(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool(t, ctx, "wo-worker", map[string]string{"wo-role/worker": ""})
	pool(t, ctx, "wo-a", map[string]string{"wo-role/a": ""})
	pool(t, ctx, "wo-b", map[string]string{"wo-role/b": ""})
	node(t, ctx, "wo-windows", map[string]string{"wo-role/worker": "", rollout.OSLabel: "windows"}, nil)
	node(t, ctx, "wo-nopool", map[string]string{"wo-role/none": ""}, nil)
	node(t, ctx, "wo-two", map[string]string{"wo-role/worker": "", "wo-role/a": "", "wo-role/b": ""}, nil)
	node(t, ctx, "wo-linux", map[string]string{"wo-role/worker": ""}, nil)
	// The Linux node's object shows the controller has seen this test's nodes.
	await(t, ctx, "wo-linux", "created", func(m *mcfgv1.MachineConfigNode) bool { return m != nil })
	time.Sleep(500 * time.Millisecond)
	for _, name := range []string{"wo-windows", "wo-nopool", "wo-two"} {
		if m := get(t, ctx, name); m != nil {
			t.Errorf("%s has a MachineConfigNode: %+v", name, m.Spec)
		}
	}
	pool(t, ctx, "wo-none", map[string]string{"wo-role/none": ""})
	m := await(t, ctx, "wo-nopool", "created by the new pool", func(m *mcfgv1.MachineConfigNode) bool { return m != nil })
	wantSpec(t, m, "wo-none", machineconfignode.NotYetSet)
}

// TestInvalidDesiredConfig: a desiredConfig the CRD cannot take is a Warning event on the
// Node, and the object stays as it was.
func TestInvalidDesiredConfig(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool(t, ctx, "bad-worker", map[string]string{"bad-role/worker": ""})
	n := node(t, ctx, "bad-0", map[string]string{"bad-role/worker": ""}, map[string]string{protocol.DesiredConfigAnnotation: "rendered-bad-1"})
	await(t, ctx, "bad-0", "created", func(m *mcfgv1.MachineConfigNode) bool { return m != nil })
	annotate(t, ctx, n, protocol.DesiredConfigAnnotation, "Not_A_Name")
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var events corev1.EventList
		if err := env.Client.List(ctx, &events, client.InNamespace(metav1.NamespaceDefault)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == "bad-0" && e.Reason == ReasonInvalidDesiredConfig &&
				strings.Contains(e.Message, `annotation machineconfiguration.openshift.io/desiredConfig="Not_A_Name" is not a MachineConfig name`) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no %s event naming the annotation: %v", ReasonInvalidDesiredConfig, err)
	}
	if m := get(t, ctx, "bad-0"); m == nil || m.Spec.ConfigVersion.Desired != "rendered-bad-1" {
		t.Errorf("object not kept as it was: %+v", m)
	}
}

func pool(t *testing.T, ctx context.Context, name string, selector map[string]string) {
	t.Helper()
	p := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: mcfgv1.MachineConfigPoolSpec{NodeSelector: &metav1.LabelSelector{MatchLabels: selector}}}
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), p) })
}

func node(t *testing.T, ctx context.Context, name string, labels, annotations map[string]string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}}
	if err := env.Client.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), n) })
	return n
}

func label(t *testing.T, ctx context.Context, n *corev1.Node, key string, value *string) {
	t.Helper()
	before := n.DeepCopy()
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	if value == nil {
		delete(n.Labels, key)
	} else {
		n.Labels[key] = *value
	}
	if err := env.Client.Patch(ctx, n, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

func annotate(t *testing.T, ctx context.Context, n *corev1.Node, key, value string) {
	t.Helper()
	before := n.DeepCopy()
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[key] = value
	if err := env.Client.Patch(ctx, n, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// get reads the object from the API server (nil when there is none).
func get(t *testing.T, ctx context.Context, name string) *mcfgv1.MachineConfigNode {
	t.Helper()
	m := &mcfgv1.MachineConfigNode{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, m); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	return m
}

func await(t *testing.T, ctx context.Context, name, what string, cond func(*mcfgv1.MachineConfigNode) bool) *mcfgv1.MachineConfigNode {
	t.Helper()
	var m *mcfgv1.MachineConfigNode
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		m = get(t, ctx, name)
		return cond(m), nil
	})
	if err != nil {
		t.Fatalf("MachineConfigNode %s never %s; last %+v", name, what, m)
	}
	return m
}

func wantSpec(t *testing.T, m *mcfgv1.MachineConfigNode, pool, desired string) {
	t.Helper()
	want := mcfgv1.MachineConfigNodeSpec{Node: mcfgv1.MCOObjectReference{Name: m.Name}, Pool: mcfgv1.MCOObjectReference{Name: pool},
		ConfigVersion: mcfgv1.MachineConfigNodeSpecMachineConfigVersion{Desired: desired}}
	if m.Spec != want {
		t.Errorf("spec %+v, want %+v", m.Spec, want)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestMirrorsHold: the node's hold and update priority show on its MachineConfigNode, written
// only when they change, and go when the node drops them.
func TestMirrorsHold(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool(t, ctx, "hold-worker", map[string]string{"hold-role/worker": ""})
	n := node(t, ctx, "hold-0", map[string]string{"hold-role/worker": ""}, nil)
	await(t, ctx, "hold-0", "created", func(m *mcfgv1.MachineConfigNode) bool { return m != nil })

	annotate(t, ctx, n, rolloutv1.HoldAnnotation, "true")
	annotate(t, ctx, n, rolloutv1.UpdatePriorityAnnotation, "10")
	m := await(t, ctx, "hold-0", "shows the hold and priority", func(m *mcfgv1.MachineConfigNode) bool {
		return m != nil && m.Annotations[rolloutv1.HoldAnnotation] == "true" && m.Annotations[rolloutv1.UpdatePriorityAnnotation] == "10"
	})

	// A change the predicate passes that changes nothing mirrored: no write.
	label(t, ctx, n, "hold-role/unrelated", ptrTo("x"))
	annotate(t, ctx, n, "hold-test/marker", "1")
	label(t, ctx, n, "hold-role/unrelated", ptrTo("y"))
	time.Sleep(time.Second)
	if got := get(t, ctx, "hold-0"); got == nil || got.ResourceVersion != m.ResourceVersion {
		t.Errorf("MachineConfigNode rewritten for nothing: resourceVersion %s, was %s", got.ResourceVersion, m.ResourceVersion)
	}

	annotate(t, ctx, n, rolloutv1.HoldAnnotation, "false")
	m = await(t, ctx, "hold-0", "released", func(m *mcfgv1.MachineConfigNode) bool {
		if m == nil {
			return false
		}
		_, held := m.Annotations[rolloutv1.HoldAnnotation]
		return !held
	})
	if m.Annotations[rolloutv1.UpdatePriorityAnnotation] != "10" {
		t.Errorf("the priority went with the hold: %v", m.Annotations)
	}
}
