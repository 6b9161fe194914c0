//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
)

func holdOf(t *testing.T, e *explainCase, n *corev1.Node) (string, bool) {
	t.Helper()
	e.must(controlPlane.Client.Get(e.ctx, client.ObjectKeyFromObject(n), n))
	v, ok := n.Annotations[rolloutv1.HoldAnnotation]
	return v, ok
}

func TestHold(t *testing.T) {
	e := newExplainCase(t, "x-hold")
	e.pool(nil, condTrue(poolcondition.NodesHeld, "1 nodes are held", "Waiting for held nodes: x-hold-a (on rendered-x-hold-old). Release them with `mco hold --undo x-hold-a`"))
	idle := e.node("x-hold-a", 0, protocol.CurrentConfigAnnotation, e.old(), protocol.DesiredConfigAnnotation, e.old(), protocol.StateAnnotation, "Done",
		rolloutv1.UpdatePriorityAnnotation, "7")
	busy := e.node("x-hold-b", 0, protocol.CurrentConfigAnnotation, e.old(), protocol.DesiredConfigAnnotation, e.target(), protocol.StateAnnotation, "Working")
	kubeconfig := "--kubeconfig=" + controlPlane.KubeconfigPath

	t.Run("an unknown node is refused, naming it, and nothing is changed", func(t *testing.T) {
		_, stderr, code := runMCO(t, "hold", "x-hold-a", "x-hold-nope", kubeconfig)
		if code != 1 || !strings.Contains(stderr, "node x-hold-nope: no such node; no node was changed") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		if _, set := holdOf(t, e, idle); set {
			t.Error("x-hold-a was held although the command was refused")
		}
	})

	t.Run("hold, saying what it means for each node", func(t *testing.T) {
		stdout, stderr, code := runMCO(t, "hold", "x-hold-a", "x-hold-b", kubeconfig)
		want := "node/x-hold-a: held; no update starts on it until `mco hold --undo x-hold-a`\n" +
			"node/x-hold-b: held; its update to rendered-x-hold-new is in progress and will finish; no further update starts on it until `mco hold --undo x-hold-b`\n"
		if code != 0 || stdout != want {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		for _, n := range []*corev1.Node{idle, busy} {
			if v, _ := holdOf(t, e, n); v != "true" {
				t.Errorf("%s: hold=%q", n.Name, v)
			}
		}
		if stdout, _, _ := runMCO(t, "hold", "x-hold-a", kubeconfig); !strings.Contains(stdout, "node/x-hold-a: already held") {
			t.Errorf("again: %q", stdout)
		}
	})

	t.Run("status and explain show it", func(t *testing.T) {
		stdout, _, code := runMCO(t, "status", kubeconfig)
		if code != 0 || !strings.Contains(stdout, "held, priority 7") || !strings.Contains(stdout, "applying, held") ||
			!strings.Contains(stdout, "NodesHeld: Waiting for held nodes: x-hold-a") {
			t.Errorf("mco status:\n%s", stdout)
		}
		e.explain("node/x-hold-a", []string{"held: runs rendered-x-hold-old, mcp/x-hold targets rendered-x-hold-new", "`mco hold --undo x-hold-a`"})
		e.explain("mcp/x-hold", []string{"1 node is held back by an admin (`mco hold`)", "waits for x-hold-a"})
	})

	t.Run("undo", func(t *testing.T) {
		stdout, stderr, code := runMCO(t, "hold", "--undo", "x-hold-a", kubeconfig)
		if code != 0 || stdout != "node/x-hold-a: released; it is updated with its pool again (within maxUnavailable) if it is behind\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		if _, set := holdOf(t, e, idle); set {
			t.Error("the hold is still there")
		}
		if v, _ := holdOf(t, e, busy); v != "true" {
			t.Errorf("x-hold-b was released too: hold=%q", v)
		}
		if stdout, _, _ := runMCO(t, "hold", "--undo", "x-hold-a", kubeconfig); stdout != "node/x-hold-a: not held; nothing to release\n" {
			t.Errorf("again: %q", stdout)
		}
	})

	t.Run("no node named", func(t *testing.T) {
		if _, stderr, code := runMCO(t, "hold", kubeconfig); code != 1 || !strings.Contains(stderr, "requires at least 1 arg") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}
