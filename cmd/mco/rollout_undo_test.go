//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/rollback"
	"github.com/mco-dev/mco/internal/testenv"
)

// undoPool is a pool of role with two nodes on its target B, rendered from a MachineConfig
// writing /etc/undo-test, whose earlier content rendered A; previous names A when set. No
// controller runs here: the test writes what the render and node controllers would have.
func undoPool(t *testing.T, ctx context.Context, role string, previous bool) (a, b string) {
	t.Helper()
	c := controlPlane.Client
	pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: role}, Spec: mcfgv1.MachineConfigPoolSpec{
		MachineConfigSelector: &metav1.LabelSelector{MatchLabels: map[string]string{protocol.RoleLabel: role}},
		NodeSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/" + role: ""}},
	}}
	if err := c.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	fileMC := func(content string) *mcfgv1.MachineConfig {
		return &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: "50-" + role, Labels: map[string]string{protocol.RoleLabel: role}},
			Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(fmt.Sprintf(
				`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/undo-test","contents":{"source":"data:,%s"},"mode":420}]}}`, content))}}}
	}
	renderInto := func(mc *mcfgv1.MachineConfig) string {
		res, err := render.Render(pool, []*mcfgv1.MachineConfig{mc}, render.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, res.Config); err != nil {
			t.Fatal(err)
		}
		return res.Config.Name
	}
	a = renderInto(fileMC("a"))
	current := fileMC("b")
	b = renderInto(current)
	if err := c.Create(ctx, current); err != nil {
		t.Fatal(err)
	}
	pool.Spec.Configuration.Name = b
	if previous {
		pool.Annotations = map[string]string{rolloutv1.PreviousConfigurationAnnotation: a}
	}
	if err := c.Update(ctx, pool); err != nil {
		t.Fatal(err)
	}
	pool.Status.Configuration.Name = b
	if err := c.Status().Update(ctx, pool); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", role, i), Labels: map[string]string{"node-role.kubernetes.io/" + role: ""},
			Annotations: map[string]string{protocol.CurrentConfigAnnotation: b, protocol.DesiredConfigAnnotation: b, protocol.StateAnnotation: string(protocol.NodeDone)}}}
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

func rollbackOf(t *testing.T, ctx context.Context, pool string) *rolloutv1.Rollback {
	t.Helper()
	p := &mcfgv1.MachineConfigPool{}
	if err := controlPlane.Client.Get(ctx, client.ObjectKey{Name: pool}, p); err != nil {
		t.Fatal(err)
	}
	rb, err := rollback.Of(p)
	if err != nil {
		t.Fatal(err)
	}
	return rb
}

func TestRolloutUndo(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kubeconfig := "--kubeconfig=" + controlPlane.KubeconfigPath
	const role = "undo-cli"
	a, b := undoPool(t, ctx, role, true)

	// --dry-run shows the plan and writes nothing.
	stdout, stderr, code := runMCO(t, "rollout", "undo", "mcp/"+role, "--dry-run", kubeconfig)
	if code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"undo of pool " + role + ": " + b + " → " + a + " (the completed rollout is undone: back to the previous configuration)",
		role + "-0," + role + "-1", "File /etc/undo-test", "rolled back: held on " + a, "--dry-run: nothing written",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, stdout)
		}
	}
	if rb := rollbackOf(t, ctx, role); rb != nil {
		t.Fatalf("--dry-run wrote %+v", *rb)
	}

	// For real: the annotation, from the target back to the previous configuration.
	stdout, stderr, code = runMCO(t, "rollout", "undo", "mcp/"+role, kubeconfig)
	if code != 0 {
		t.Fatalf("undo: exit %d: %s", code, stderr)
	}
	rb := rollbackOf(t, ctx, role)
	if rb == nil || rb.From != b || rb.To != a || rb.By != rollback.ByUndo {
		t.Fatalf("rollback %+v, want %s to %s by %s", rb, b, a, rollback.ByUndo)
	}
	if !strings.Contains(stdout, "pool "+role+": rolling back from "+b+" to "+a) {
		t.Errorf("output does not say what it did:\n%s", stdout)
	}

	// A second undo is refused: the pool is held already.
	_, stderr, code = runMCO(t, "rollout", "undo", "mcp/"+role, kubeconfig)
	if code == 0 || !strings.Contains(stderr, "pool "+role+" is already held on "+a) {
		t.Errorf("second undo: exit %d: %s; want a refusal naming the hold", code, stderr)
	}

	// mco rollout resume ends the hold, and says so, with no policy selecting the pool.
	stdout, stderr, code = runMCO(t, "rollout", "resume", "mcp/"+role, kubeconfig)
	if code != 0 || !strings.Contains(stdout, "ended the rollback hold of pool "+role) {
		t.Fatalf("resume: exit %d: %s%s", code, stdout, stderr)
	}
	if rb := rollbackOf(t, ctx, role); rb != nil {
		t.Fatalf("resume left %+v", *rb)
	}
}

func TestRolloutUndoRefusals(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kubeconfig := "--kubeconfig=" + controlPlane.KubeconfigPath
	const role = "undo-nohistory"
	undoPool(t, ctx, role, false)
	_, stderr, code := runMCO(t, "rollout", "undo", "mcp/"+role, kubeconfig)
	if code == 0 || !strings.Contains(stderr, "pool "+role+" has no previous configuration to return to") {
		t.Errorf("exit %d: %s; want a refusal: nothing to return to", code, stderr)
	}
	_, stderr, code = runMCO(t, "rollout", "undo", "mcp/no-such-pool", kubeconfig)
	if code == 0 || !strings.Contains(stderr, "mcp/no-such-pool: no such MachineConfigPool") {
		t.Errorf("exit %d: %s; want the pool named", code, stderr)
	}
}
