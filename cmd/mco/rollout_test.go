//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/testenv"
)

// pacedPool creates a pool labelled for policies of this test only, and a policy selecting
// it whose status the test writes as the pacing controller would (no controller runs here).
func pacedPool(t *testing.T, ctx context.Context, name string, status ...rolloutv1.PoolRolloutStatus) *rolloutv1.MachineConfigPoolRollout {
	t.Helper()
	c := controlPlane.Client
	pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"rollout-test": name}}}
	pool.Spec.Configuration.Name = "rendered-" + name + "-new"
	if err := c.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if len(status) == 0 {
		return nil
	}
	return createPolicy(t, ctx, name, name, status...)
}

func createPolicy(t *testing.T, ctx context.Context, name, pool string, status ...rolloutv1.PoolRolloutStatus) *rolloutv1.MachineConfigPoolRollout {
	t.Helper()
	c := controlPlane.Client
	policy := &rolloutv1.MachineConfigPoolRollout{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: rolloutv1.MachineConfigPoolRolloutSpec{
			PoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"rollout-test": pool}},
			Canary:       &rolloutv1.Canary{Nodes: intstr.FromInt32(1)},
			Soak:         metav1.Duration{Duration: 30 * time.Minute},
		},
	}
	if err := c.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	policy.Status.Pools = status
	if err := c.Status().Update(ctx, policy); err != nil {
		t.Fatal(err)
	}
	return policy
}

func resumedAt(t *testing.T, ctx context.Context, policy string) string {
	t.Helper()
	var got rolloutv1.MachineConfigPoolRollout
	if err := controlPlane.Client.Get(ctx, client.ObjectKey{Name: policy}, &got); err != nil {
		t.Fatal(err)
	}
	return got.Annotations[rolloutv1.ResumeAnnotation]
}

func TestRolloutResume(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kubeconfig := "--kubeconfig=" + controlPlane.KubeconfigPath
	finished := &metav1.Time{Time: time.Now().Add(-time.Minute).UTC().Truncate(time.Second)}
	canaryHold := func(pool string) rolloutv1.PoolRolloutStatus {
		return rolloutv1.PoolRolloutStatus{Name: pool, Phase: rolloutv1.PhaseCanary, Batch: 1, BatchFinishedAt: finished, NodesDone: 1, NodesRemaining: 3,
			Reason: "canary done: waiting for `mco rollout resume` or soak (29m left)"}
	}

	t.Run("canary hold, by pool", func(t *testing.T) {
		pacedPool(t, ctx, "canary-held", canaryHold("canary-held"))
		before := time.Now().UTC().Truncate(time.Second)
		stdout, stderr, code := runMCO(t, "rollout", "resume", "mcp/canary-held", kubeconfig)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if want := "resumed mcprollout/canary-held: pool canary-held was Canary (canary done: waiting for `mco rollout resume` or soak (29m left))\n"; stdout != want {
			t.Errorf("stdout %q, want %q", stdout, want)
		}
		marker := resumedAt(t, ctx, "canary-held")
		at, err := time.Parse(time.RFC3339, marker)
		if err != nil || !strings.HasSuffix(marker, "Z") || at.Before(before) || at.After(time.Now()) {
			t.Errorf("%s = %q (%v), want an RFC 3339 UTC time of the resume", rolloutv1.ResumeAnnotation, marker, err)
		}
	})

	t.Run("soak, by policy name", func(t *testing.T) {
		pacedPool(t, ctx, "soaking", rolloutv1.PoolRolloutStatus{Name: "soaking", Phase: rolloutv1.PhaseSoaking, Batch: 2, BatchFinishedAt: finished,
			Reason: "soaking batch 2 until 14:05; 3/7 updated"})
		stdout, stderr, code := runMCO(t, "rollout", "resume", "mcprollout/soaking", kubeconfig)
		if code != 0 || !strings.HasPrefix(stdout, "resumed mcprollout/soaking: pool soaking was Soaking") || resumedAt(t, ctx, "soaking") == "" {
			t.Errorf("exit %d, stdout %q, stderr %q, marker %q", code, stdout, stderr, resumedAt(t, ctx, "soaking"))
		}
	})

	t.Run("batch still running: refused, then forced", func(t *testing.T) {
		pacedPool(t, ctx, "running", rolloutv1.PoolRolloutStatus{Name: "running", Phase: rolloutv1.PhaseProgressing, Batch: 2, Reason: "batch 2: 1 node still updating"})
		_, stderr, code := runMCO(t, "rollout", "resume", "mcp/running", kubeconfig)
		if code != 1 || !strings.Contains(stderr, "no hold to release now: pool running is Progressing (batch 2: 1 node still updating)") {
			t.Errorf("exit %d, stderr %q; want exit 1 saying there is no hold", code, stderr)
		}
		if m := resumedAt(t, ctx, "running"); m != "" {
			t.Fatalf("refused resume set the marker %q", m)
		}
		stdout, stderr, code := runMCO(t, "rollout", "resume", "mcp/running", "--force", kubeconfig)
		if code != 0 || !strings.HasPrefix(stdout, "resumed mcprollout/running (--force): no hold to release now") || resumedAt(t, ctx, "running") == "" {
			t.Errorf("forced: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})

	t.Run("no policy", func(t *testing.T) {
		pacedPool(t, ctx, "unpaced")
		_, stderr, code := runMCO(t, "rollout", "resume", "mcp/unpaced", kubeconfig)
		if code != 1 || !strings.Contains(stderr, "pool unpaced has no MachineConfigPoolRollout") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})

	t.Run("two policies", func(t *testing.T) {
		pacedPool(t, ctx, "contested", canaryHold("contested"))
		createPolicy(t, ctx, "contested-too", "contested", canaryHold("contested"))
		_, stderr, code := runMCO(t, "rollout", "resume", "mcp/contested", kubeconfig)
		if code != 1 || !strings.Contains(stderr, "pool contested is selected by mcprollout/contested and mcprollout/contested-too") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		if resumedAt(t, ctx, "contested")+resumedAt(t, ctx, "contested-too") != "" {
			t.Error("a refused resume set a marker")
		}
	})

	t.Run("missing objects and bad arguments", func(t *testing.T) {
		for arg, want := range map[string]string{
			"mcp/nope":        "mcp/nope:",
			"mcprollout/nope": "mcprollout/nope:",
			"node/w1":         "want mcp/POOL or mcprollout/NAME",
			"mcp/":            "want mcp/POOL or mcprollout/NAME",
		} {
			if _, stderr, code := runMCO(t, "rollout", "resume", arg, kubeconfig); code != 1 || !strings.Contains(stderr, want) {
				t.Errorf("%s: exit %d, stderr %q; want %q", arg, code, stderr, want)
			}
		}
	})
}

// A pool the policy holds is not stuck: `mco rollout status` says why it waits and when the
// next batch starts, keeps exit 2 on timeout, and `mco status` shows the pacing phase.
func TestRolloutStatusShowsPacing(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kubeconfig := "--kubeconfig=" + controlPlane.KubeconfigPath
	finished := &metav1.Time{Time: time.Now().Add(-10 * time.Minute).UTC().Truncate(time.Second)}
	pacedPool(t, ctx, "held", rolloutv1.PoolRolloutStatus{Name: "held", Phase: rolloutv1.PhaseSoaking, Batch: 2, BatchFinishedAt: finished,
		Reason: "soaking batch 2; 2/4 updated"})

	stdout, stderr, code := runMCO(t, "rollout", "status", "mcp/held", "--timeout=2s", "--interval=200ms", kubeconfig)
	if code != 2 || !strings.Contains(stderr, "pool held not updated before the timeout; paced by mcprollout/held: Soaking") {
		t.Errorf("exit %d, stderr %q; want the timeout's exit 2 naming the hold", code, stderr)
	}
	soakEnd := finished.Add(30 * time.Minute).Local().Format("Mon 15:04 MST")
	for _, want := range []string{
		"pool held -> rendered-held-new\npaced by mcprollout/held: Soaking (soaking batch 2; 2/4 updated)\n",
		"next batch: at " + soakEnd + " (in 20m) when the soak ends, or on `mco rollout resume mcp/held`\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}

	stdout, stderr, code = runMCO(t, "status", kubeconfig)
	if code != 0 {
		t.Fatalf("mco status: exit %d: %s", code, stderr)
	}
	var header, held []string
	for _, line := range strings.Split(stdout, "\n") {
		switch f := strings.Fields(line); {
		case len(f) > 0 && f[0] == "POOL":
			header = f
		case len(f) > 0 && f[0] == "held":
			held = f
		}
	}
	if len(header) < 7 || header[6] != "PACING" || len(held) < 7 || held[6] != "Soaking" {
		t.Errorf("pools table: header %v, pool held %v:\n%s", header, held, stdout)
	}
}
