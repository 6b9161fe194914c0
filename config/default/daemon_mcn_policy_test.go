package install

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/machineconfignode"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestDaemonMachineConfigNodePolicy checks daemon-mcn-policy.yaml and the agent's RBAC in the
// real API server with real agent tokens: an agent writes the status of its own Node's
// MachineConfigNode, as the agent does (internal/daemon: patchMachineConfigNodeStatus), and
// nothing else of any MachineConfigNode.
func TestDaemonMachineConfigNodePolicy(t *testing.T) {
	e := requireEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := kubernetes.NewForConfigOrDie(e.Config)
	a := createManagedNode(ctx, t, admin, "mcn-policy-a", "rendered-worker-a")
	b := createManagedNode(ctx, t, admin, "mcn-policy-b", "rendered-worker-a")
	for _, n := range []string{a.Name, b.Name} {
		ensureMCN(ctx, t, e, n)
	}
	agentA := mcnClientFor(t, e, token(ctx, t, admin, "mco-daemon", &authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: a.Name, UID: a.UID}))
	done := statusPatch(a.Name, "rendered-worker-a")

	// The API server enforces a new policy once its informer has it.
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsForbidden(patchStatus(ctx, agentA, b.Name, statusPatch(b.Name, "rendered-worker-a"))), nil
	})
	if err != nil {
		t.Fatalf("the policy never refused agent %s a status write of MachineConfigNode %s: %v", a.Name, b.Name, err)
	}

	t.Run("own status", func(t *testing.T) {
		if err := patchStatus(ctx, agentA, a.Name, done); err != nil {
			t.Fatalf("agent %s writing its own MachineConfigNode's status: %v", a.Name, err)
		}
		got := &mcfgv1.MachineConfigNode{}
		if err := e.Client.Get(ctx, client.ObjectKey{Name: a.Name}, got); err != nil {
			t.Fatal(err)
		}
		if got.Status.ConfigVersion == nil || got.Status.ConfigVersion.Current != "rendered-worker-a" {
			t.Errorf("status not written: %+v", got.Status)
		}
		// And reads it, as the agent does before its first write.
		if err := agentA.Get(ctx, client.ObjectKey{Name: a.Name}, &mcfgv1.MachineConfigNode{}); err != nil {
			t.Errorf("agent %s reading its own MachineConfigNode: %v", a.Name, err)
		}
	})

	t.Run("another node's", func(t *testing.T) {
		expectMCNRefused(ctx, t, e, b.Name, func() error { return patchStatus(ctx, agentA, b.Name, statusPatch(b.Name, "rendered-worker-a")) },
			fmt.Sprintf("mco-daemon of node %s may not write MachineConfigNode %s", a.Name, b.Name))
	})

	t.Run("token without a node", func(t *testing.T) {
		unbound := mcnClientFor(t, e, token(ctx, t, admin, "mco-daemon", nil))
		expectMCNRefused(ctx, t, e, a.Name, func() error { return patchStatus(ctx, unbound, a.Name, done) },
			"only with a service account token bound to its node", nodeNameClaim, "write of MachineConfigNode "+a.Name+" is refused")
	})

	t.Run("spec, create, delete: RBAC", func(t *testing.T) {
		spec := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"pool":{"name":"master"}}}`))
		expectMCNRefused(ctx, t, e, a.Name, func() error {
			return agentA.Patch(ctx, &mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: a.Name}}, spec)
		}, "forbidden")
		expectMCNRefused(ctx, t, e, a.Name, func() error {
			return agentA.Delete(ctx, &mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: a.Name}})
		}, "forbidden")
		fresh := &mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: "mcn-policy-new"},
			Spec: mcfgv1.MachineConfigNodeSpec{Node: mcfgv1.MCOObjectReference{Name: "mcn-policy-new"}, Pool: mcfgv1.MCOObjectReference{Name: "worker"},
				ConfigVersion: mcfgv1.MachineConfigNodeSpecMachineConfigVersion{Desired: machineconfignode.NotYetSet}}}
		if err := agentA.Create(ctx, fresh); !apierrors.IsForbidden(err) {
			t.Errorf("agent creating a MachineConfigNode: %v, want 403", err)
		}
	})

	t.Run("controller unaffected", func(t *testing.T) {
		ctrl := mcnClientFor(t, e, token(ctx, t, admin, "mco-controller", nil))
		spec := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"configVersion":{"desired":"rendered-worker-b"}}}`))
		if err := ctrl.Patch(ctx, &mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: b.Name}}, spec); err != nil {
			t.Errorf("controller patching the spec of MachineConfigNode %s: %v", b.Name, err)
		}
	})
}

// ensureMCN creates the MachineConfigNode of node as the controller would (it may exist from a
// test that ran the controller).
func ensureMCN(ctx context.Context, t *testing.T, e *testenv.Env, node string) {
	t.Helper()
	m := &mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: node},
		Spec: mcfgv1.MachineConfigNodeSpec{Node: mcfgv1.MCOObjectReference{Name: node}, Pool: mcfgv1.MCOObjectReference{Name: "worker"},
			ConfigVersion: mcfgv1.MachineConfigNodeSpecMachineConfigVersion{Desired: "rendered-worker-a"}}}
	if err := e.Client.Create(ctx, m); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Client.Delete(context.Background(), m) })
}

// statusPatch is a status the agent writes: node Done in config.
func statusPatch(node, config string) client.Patch {
	st := machineconfignode.Next(node, mcfgv1.MachineConfigNodeStatus{},
		machineconfignode.Step{Kind: machineconfignode.Done, Current: config, Desired: config}, metav1.Now())
	m := &mcfgv1.MachineConfigNode{Status: st}
	data, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": m.Status.Conditions, "configVersion": m.Status.ConfigVersion}})
	if err != nil {
		panic(err)
	}
	return client.RawPatch(types.MergePatchType, data)
}

func patchStatus(ctx context.Context, c client.Client, name string, p client.Patch) error {
	return c.Status().Patch(ctx, &mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: name}}, p)
}

// mcnClientFor is a client of the test API server authenticated by token alone.
func mcnClientFor(t *testing.T, e *testenv.Env, token string) client.Client {
	t.Helper()
	cfg := rest.AnonymousClientConfig(e.Config)
	cfg.BearerToken = token
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// expectMCNRefused wants write to be refused with a 403 containing every one of want, and the
// object left as it was.
func expectMCNRefused(ctx context.Context, t *testing.T, e *testenv.Env, name string, write func() error, want ...string) {
	t.Helper()
	resourceVersion := func() string {
		m := &mcfgv1.MachineConfigNode{}
		if err := e.Client.Get(ctx, client.ObjectKey{Name: name}, m); err != nil {
			t.Fatal(err)
		}
		return m.ResourceVersion
	}
	before := resourceVersion()
	err := write()
	if after := resourceVersion(); after != before {
		t.Errorf("refused write changed MachineConfigNode %s (resourceVersion %s -> %s)", name, before, after)
	}
	if !apierrors.IsForbidden(err) {
		t.Errorf("write of MachineConfigNode %s: got %v, want 403 Forbidden", name, err)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refused with %q, which does not say %q", err, w)
		}
	}
	t.Logf("refused: %v", err)
}
