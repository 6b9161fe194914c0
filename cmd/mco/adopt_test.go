//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"encoding/json"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/adoption"
	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/render"
)

// pendingAdoption is what a node's agent publishes when adopting the node into target writes
// /etc/chrony.conf and reboots.
func pendingAdoption(t *testing.T, target string) []string {
	t.Helper()
	plan, err := adoption.Encode(adoption.Plan{Target: target, Actions: "Reboot", Drain: true, Reboot: true,
		Files: []adoption.FileChange{{Path: "/etc/chrony.conf", Change: adoption.ChangeContent,
			Diff: "--- host/etc/chrony.conf\n+++ config/etc/chrony.conf\n@@ -1 +1 @@\n-pool 2.debian.pool.ntp.org iburst\n+server 10.0.0.1 iburst"}},
		Units: []adoption.UnitChange{{Name: "chronyd.service", Change: "enable"}}})
	if err != nil {
		t.Fatal(err)
	}
	return []string{protocol.AdoptionTargetAnnotation, target, protocol.AdoptionAnnotation, protocol.AdoptionPending, protocol.AdoptionPlanAnnotation, plan}
}

func adoptApproval(t *testing.T, e *explainCase, obj client.Object) (string, bool) {
	t.Helper()
	e.must(controlPlane.Client.Get(e.ctx, client.ObjectKeyFromObject(obj), obj))
	v, ok := obj.GetAnnotations()[protocol.AdoptAnnotation]
	return v, ok
}

func TestAdopt(t *testing.T) {
	e := newExplainCase(t, "x-adopt")
	e.pool(nil, condTrue(poolcondition.NodesAwaitingAdoption, "ApprovalRequired",
		"Node x-adopt-k1: adopting into rendered-x-adopt-new would write 1 file (/etc/chrony.conf), change 1 unit (chronyd.service), drain, then reboot"))
	k1 := e.node("x-adopt-k1", 0, pendingAdoption(t, e.target())...)
	k2 := e.node("x-adopt-k2", 0, protocol.AdoptionTargetAnnotation, e.target())
	managed := e.node("x-adopt-m1", 0, protocol.CurrentConfigAnnotation, e.target(), protocol.DesiredConfigAnnotation, e.target(), protocol.StateAnnotation, "Done")
	kubeconfig := "--kubeconfig=" + controlPlane.KubeconfigPath

	t.Run("a managed node is refused, naming it, and nothing is changed", func(t *testing.T) {
		_, stderr, code := runMCO(t, "adopt", "x-adopt-k1", "x-adopt-m1", kubeconfig)
		if code != 1 || !strings.Contains(stderr, "node x-adopt-m1 is already managed by mco (currentConfig rendered-x-adopt-new): nothing to adopt; no node was changed") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		if _, set := adoptApproval(t, e, k1); set {
			t.Error("x-adopt-k1 was approved although the command was refused")
		}
		if _, set := adoptApproval(t, e, managed); set {
			t.Error("the managed node was annotated")
		}
	})

	t.Run("approve nodes", func(t *testing.T) {
		stdout, stderr, code := runMCO(t, "adopt", "x-adopt-k1", "x-adopt-k2", kubeconfig)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for _, want := range []string{
			"node/x-adopt-k1: adoption approved: adopting into rendered-x-adopt-new would write 1 file (/etc/chrony.conf), change 1 unit (chronyd.service), drain, then reboot; it starts within mcp/x-adopt's maxUnavailable\n",
			"node/x-adopt-k2: adoption approved; its agent has not published what adopting into mcp/x-adopt's rendered-x-adopt-new would do yet",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
		}
		for _, n := range []*corev1.Node{k1, k2} {
			if v, _ := adoptApproval(t, e, n); v != protocol.AdoptApproved {
				t.Errorf("%s: adopt=%q", n.Name, v)
			}
		}
	})

	t.Run("mco status and mco explain show the approved node waiting for room", func(t *testing.T) {
		stdout, _, code := runMCO(t, "status", kubeconfig)
		if code != 0 || !strings.Contains(stdout, "adoption  approved, waiting for room in its pool: adopting into rendered-x-adopt-new") ||
			!strings.Contains(stdout, "NodesAwaitingAdoption: Node x-adopt-k1") {
			t.Errorf("mco status:\n%s", stdout)
		}
		e.explain("node/x-adopt-k1", []string{"adoption into rendered-x-adopt-new approved, waiting for room in mcp/x-adopt"})
	})

	t.Run("undo", func(t *testing.T) {
		stdout, stderr, code := runMCO(t, "adopt", "--undo", "x-adopt-k1", kubeconfig)
		if code != 0 || stdout != "node/x-adopt-k1: adoption approval withdrawn\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		if _, set := adoptApproval(t, e, k1); set {
			t.Error("the approval is still there")
		}
		e.explain("node/x-adopt-k1", []string{
			"waiting for adoption into rendered-x-adopt-new in mcp/x-adopt",
			"writes /etc/chrony.conf (content):\n      --- host/etc/chrony.conf",
			"+server 10.0.0.1 iburst",
			"approve this node: `mco adopt x-adopt-k1`",
		})
	})

	t.Run("the pool", func(t *testing.T) {
		pool := &mcfgv1.MachineConfigPool{}
		pool.Name = e.name
		stdout, stderr, code := runMCO(t, "adopt", "--pool", e.name, kubeconfig)
		if code != 0 || !strings.Contains(stdout, "mcp/x-adopt: adoption approved for every node of the pool mco did not boot, now and later (1 wait now: x-adopt-k1)") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		if v, _ := adoptApproval(t, e, pool); v != protocol.AdoptApproved {
			t.Errorf("pool adopt=%q", v)
		}
		if _, _, code := runMCO(t, "adopt", "--pool", e.name, "--undo", kubeconfig); code != 0 {
			t.Errorf("undo: exit %d", code)
		}
		if _, set := adoptApproval(t, e, pool); set {
			t.Error("the pool's approval is still there")
		}
	})

	t.Run("bad arguments", func(t *testing.T) {
		for _, args := range [][]string{{"adopt"}, {"adopt", "x-adopt-k1", "--pool", "x-adopt"}} {
			if _, stderr, code := runMCO(t, append(args, kubeconfig)...); code != 1 || !strings.Contains(stderr, "name the nodes to adopt, or --pool POOL") {
				t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
			}
		}
		if _, stderr, code := runMCO(t, "adopt", "--pool", "nope", kubeconfig); code != 1 || !strings.Contains(stderr, "mcp/nope: no such MachineConfigPool") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		if _, stderr, code := runMCO(t, "adopt", "nope", kubeconfig); code != 1 || !strings.Contains(stderr, `node nope: nodes "nope" not found`) {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

// `mco plan --pool POOL` (no -f: the pool as it stands) shows a node waiting for adoption with
// the plan its agent published, whole, as text and JSON.
func TestPlanShowsAdoption(t *testing.T) {
	e := newExplainCase(t, "x-adoptplan")
	c := controlPlane.Client
	pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: e.name}}
	pool.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"explain-test": e.name}}
	pool.Spec.MachineConfigSelector = &metav1.LabelSelector{MatchLabels: map[string]string{protocol.RoleLabel: e.name}}
	base := &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: "00-" + e.name, Labels: map[string]string{protocol.RoleLabel: e.name}}}
	base.Spec.Config.Raw = []byte(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/chrony.conf","contents":{"source":"data:,server%2010.0.0.1%20iburst%0A"},"mode":420}]}}`)
	e.must(c.Create(e.ctx, base))
	res, err := render.Render(pool, []*mcfgv1.MachineConfig{base}, render.Options{ControllerVersion: "test-commit"})
	e.must(err)
	e.must(c.Create(e.ctx, res.Config))
	pool.Spec.Configuration = mcfgv1.MachineConfigPoolStatusConfiguration{ObjectReference: corev1.ObjectReference{Name: res.Config.Name}, Source: res.Sources}
	e.must(c.Create(e.ctx, pool))
	e.node("x-adoptplan-k1", 0, pendingAdoption(t, res.Config.Name)...)
	kubeconfig := "--kubeconfig=" + controlPlane.KubeconfigPath

	stdout, stderr, code := runMCO(t, "plan", "--pool", e.name, kubeconfig)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	for _, want := range []string{
		"x-adoptplan  " + res.Config.Name + "  (not adopted)  x-adoptplan-k1  drain+reboot (awaiting approval)",
		"--- adoption of x-adoptplan-k1, awaiting approval (`mco adopt x-adoptplan-k1`): adopting into " + res.Config.Name + " would write 1 file (/etc/chrony.conf), change 1 unit (chronyd.service), drain, then reboot",
		"Actions: Reboot; drain: yes; reboot: yes",
		"File /etc/chrony.conf (content)\n--- host/etc/chrony.conf\n+++ config/etc/chrony.conf\n@@ -1 +1 @@\n-pool 2.debian.pool.ntp.org iburst\n+server 10.0.0.1 iburst\n",
		"Unit chronyd.service: enable",
		"note: no node of this pool is managed by mco yet",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("mco plan lacks %q:\n%s", want, stdout)
		}
	}

	stdout, _, code = runMCO(t, "plan", "--pool", e.name, "-o", "json", kubeconfig)
	var report changeplan.Report
	if err := json.Unmarshal([]byte(stdout), &report); code != 0 || err != nil {
		t.Fatalf("exit %d, %v:\n%s", code, err, stdout)
	}
	if a := report.Pools[0].Adoptions; len(a) != 1 || a[0].Node != "x-adoptplan-k1" || a[0].Approved || len(a[0].Plan.Files) != 1 ||
		!strings.Contains(a[0].Plan.Files[0].Diff, "+server 10.0.0.1 iburst") || !a[0].Plan.Reboot {
		t.Errorf("adoptions %+v", a)
	}

	if _, stderr, code := runMCO(t, "plan", kubeconfig); code != 2 || !strings.Contains(stderr, "or --pool alone") {
		t.Errorf("no -f, no --pool: exit %d, stderr %q", code, stderr)
	}
}
