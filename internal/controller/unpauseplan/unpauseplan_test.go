package unpauseplan

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/dev/nodesim"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

const role = "unpause"

// TestPausedPoolSaysWhatUnpausingDoes pauses a pool whose nodes run an older rendered config
// and follows the condition through a kernel-argument change, a file-only change, a
// NodeDisruptionPolicy covering the file, a node moving on its own, a node on a missing
// rendered config and the unpause.
func TestPausedPoolSaysWhatUnpausingDoes(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	old := createRendered(t, ctx, "rendered-unpause-old", "hello\n")
	karg := createRendered(t, ctx, "rendered-unpause-karg", "hello again\n", "audit=1")
	motd := createRendered(t, ctx, "rendered-unpause-motd", "hello again\n")

	pool := &mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		Spec: mcfgv1.MachineConfigPoolSpec{
			MachineConfigSelector: &metav1.LabelSelector{MatchLabels: map[string]string{protocol.RoleLabel: role}},
			NodeSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/" + role: ""}},
		},
	}
	pool.Spec.Configuration.Name = old
	if err := k8sClient.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, pool)
	var nodes []string
	for i := range 3 {
		name := fmt.Sprintf("%s-%02d", role, i)
		n, err := nodesim.CreateNode(ctx, k8sClient, name, old, map[string]string{"node-role.kubernetes.io/" + role: ""})
		if err != nil {
			t.Fatal(err)
		}
		deleteAtEnd(t, n)
		nodes = append(nodes, name)
	}
	p := waitPool(t, ctx, "updated, never paused", func(p *mcfgv1.MachineConfigPool) bool {
		return poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolUpdated) && p.Status.MachineCount == 3
	})
	if c := poolcondition.Get(&p.Status, poolcondition.PendingUpdate); c != nil {
		t.Errorf("a pool never paused carries %+v", *c)
	}

	editPool(t, ctx, func(p *mcfgv1.MachineConfigPool) { p.Spec.Paused, p.Spec.Configuration.Name = true, karg })
	waitPending(t, ctx, corev1.ConditionTrue, changeplan.ReasonDrainAndReboot, "unpausing reboots 3 nodes: kernel argument audit=1, file /etc/motd")
	// The node controller's conditions and this one live side by side, whichever wrote last.
	waitPool(t, ctx, "the node controller's paused message next to PendingUpdate", func(p *mcfgv1.MachineConfigPool) bool {
		c := poolcondition.Get(&p.Status, mcfgv1.MachineConfigPoolUpdating)
		return c != nil && c.Message == "Pool is paused; will not update to "+karg &&
			poolcondition.Get(&p.Status, poolcondition.PendingUpdate).Message == "unpausing reboots 3 nodes: kernel argument audit=1, file /etc/motd"
	})
	for _, n := range nodes {
		if got := getNode(t, ctx, n).Annotations[protocol.DesiredConfigAnnotation]; got != old {
			t.Errorf("node %s of the paused pool was targeted at %s", n, got)
		}
	}

	// Heartbeats reach neither the condition nor the API server.
	patches := statusPatches.Load()
	for i := range 3 {
		for _, n := range nodes {
			heartbeat(t, ctx, n, i)
		}
	}
	time.Sleep(time.Second)
	if got := statusPatches.Load(); got != patches {
		t.Errorf("%d status patches after node heartbeats, want none", got-patches)
	}

	editPool(t, ctx, func(p *mcfgv1.MachineConfigPool) { p.Spec.Configuration.Name = motd })
	waitPending(t, ctx, corev1.ConditionTrue, changeplan.ReasonDrainAndReboot, "unpausing reboots 3 nodes: file /etc/motd")

	setPolicy(t, ctx, "/etc/motd", operatorv1.NoneSpecAction)
	waitPending(t, ctx, corev1.ConditionTrue, changeplan.ReasonNoDisruption, "unpausing changes nothing on 3 nodes that needs a drain or reboot: no further action")

	// A node reaching the target on its own (say, reinstalled) is no longer pending.
	moveNode(t, ctx, nodes[0], motd)
	waitPending(t, ctx, corev1.ConditionTrue, changeplan.ReasonNoDisruption, "unpausing changes nothing on 2 nodes that needs a drain or reboot: no further action")

	// A node on a rendered config that is gone cannot be planned; the message says so.
	moveNode(t, ctx, nodes[1], "rendered-unpause-gone")
	waitPending(t, ctx, corev1.ConditionTrue, changeplan.ReasonNotPlanned,
		"unpausing cannot be planned for 1 node: rendered config rendered-unpause-gone not found; changes nothing on 1 node that needs a drain or reboot: no further action")

	editPool(t, ctx, func(p *mcfgv1.MachineConfigPool) { p.Spec.Paused = false })
	waitPending(t, ctx, corev1.ConditionFalse, ReasonNotPaused, "")
	waitPool(t, ctx, "updated to "+motd, func(p *mcfgv1.MachineConfigPool) bool {
		return poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolUpdated) && p.Status.Configuration.Name == motd && p.Status.UpdatedMachineCount == 3
	})
	if c := poolcondition.Get(&getPool(t, ctx).Status, poolcondition.PendingUpdate); c.Status != corev1.ConditionFalse {
		t.Errorf("after the rollout PendingUpdate is %+v, want False", *c)
	}
}

// createRendered creates a rendered config with /etc/motd and kernel arguments.
func createRendered(t *testing.T, ctx context.Context, name, motd string, kargs ...string) string {
	t.Helper()
	ign := map[string]any{
		"ignition": map[string]any{"version": "3.5.0"},
		"storage": map[string]any{"files": []any{map[string]any{
			"path": "/etc/motd", "mode": 420, "contents": map[string]any{"source": "data:," + url.PathEscape(motd)},
		}}},
	}
	raw, err := json.Marshal(ign)
	if err != nil {
		t.Fatal(err)
	}
	mc := &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: raw}, KernelArguments: kargs},
	}
	if err := k8sClient.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, mc)
	return name
}

// deleteAtEnd deletes obj when the test ends, so it can run again (-count) on the same
// control plane.
func deleteAtEnd(t *testing.T, obj client.Object) {
	t.Cleanup(func() {
		if err := k8sClient.Delete(context.Background(), obj); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting %s: %v", obj.GetName(), err)
		}
	})
}

// setPolicy creates MachineConfiguration cluster with one file policy (unstructured: the typed
// object would send empty lists the CRD's validation refuses).
func setPolicy(t *testing.T, ctx context.Context, path string, action operatorv1.NodeDisruptionPolicySpecActionType) {
	t.Helper()
	mc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": operatorv1.GroupVersion.String(),
		"kind":       "MachineConfiguration",
		"metadata":   map[string]any{"name": protocol.ClusterMachineConfiguration},
		"spec": map[string]any{
			"managementState": string(operatorv1.Managed),
			"nodeDisruptionPolicy": map[string]any{"files": []any{map[string]any{
				"path": path, "actions": []any{map[string]any{"type": string(action)}},
			}}},
		},
	}}
	if err := k8sClient.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, mc)
}

// heartbeat does what a kubelet does every few seconds: a new heartbeat time in the Ready
// condition and, now and then, an annotation of its own. Each call changes the node, so each
// sends an update event.
func heartbeat(t *testing.T, ctx context.Context, name string, round int) {
	t.Helper()
	n := getNode(t, ctx, name)
	beat := metav1.NewTime(time.Now().Add(time.Duration(round+1) * time.Minute))
	for i := range n.Status.Conditions {
		n.Status.Conditions[i].LastHeartbeatTime = beat
	}
	if err := k8sClient.Status().Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(n.DeepCopy())
	n.Annotations["node.alpha.kubernetes.io/ttl"] = fmt.Sprint(round)
	if err := k8sClient.Patch(ctx, n, patch); err != nil {
		t.Fatal(err)
	}
}

// moveNode sets a node's current and desired config, as a node that got there by itself.
func moveNode(t *testing.T, ctx context.Context, name, config string) {
	t.Helper()
	n := getNode(t, ctx, name)
	patch := client.MergeFrom(n.DeepCopy())
	n.Annotations[protocol.CurrentConfigAnnotation] = config
	n.Annotations[protocol.DesiredConfigAnnotation] = config
	if err := k8sClient.Patch(ctx, n, patch); err != nil {
		t.Fatal(err)
	}
}

func editPool(t *testing.T, ctx context.Context, edit func(*mcfgv1.MachineConfigPool)) {
	t.Helper()
	p := getPool(t, ctx)
	patch := client.MergeFrom(p.DeepCopy())
	edit(p)
	if err := k8sClient.Patch(ctx, p, patch); err != nil {
		t.Fatal(err)
	}
}

func getPool(t *testing.T, ctx context.Context) *mcfgv1.MachineConfigPool {
	t.Helper()
	p := &mcfgv1.MachineConfigPool{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: role}, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func getNode(t *testing.T, ctx context.Context, name string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
		t.Fatal(err)
	}
	return n
}

func waitPending(t *testing.T, ctx context.Context, status corev1.ConditionStatus, reason, message string) *mcfgv1.MachineConfigPool {
	t.Helper()
	return waitPool(t, ctx, fmt.Sprintf("PendingUpdate %s %s %q", status, reason, message), func(p *mcfgv1.MachineConfigPool) bool {
		c := poolcondition.Get(&p.Status, poolcondition.PendingUpdate)
		return c != nil && c.Status == status && c.Reason == reason && c.Message == message
	})
}

func waitPool(t *testing.T, ctx context.Context, what string, cond func(*mcfgv1.MachineConfigPool) bool) *mcfgv1.MachineConfigPool {
	t.Helper()
	var p mcfgv1.MachineConfigPool
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: role}, &p); err == nil && cond(&p) {
			return &p
		}
	}
	t.Fatalf("pool %s: timed out waiting for %s; conditions %+v", role, what, p.Status.Conditions)
	return nil
}
