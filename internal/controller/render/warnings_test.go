package render

import (
	"context"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/testenv"
)

// warningEvents lists the pool's RenderWarnings events of type kind.
func warningEvents(t *testing.T, ctx context.Context, pool, kind string) []corev1.Event {
	t.Helper()
	var events corev1.EventList
	if err := k8sClient.List(ctx, &events); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range events.Items {
		if e.InvolvedObject.Name == pool && e.Reason == ReasonRenderWarnings && e.Type == kind {
			out = append(out, e)
		}
	}
	return out
}

// waitForEvents waits until the pool has n RenderWarnings events of type kind, each emitted once.
func waitForEvents(t *testing.T, ctx context.Context, pool, kind string, n int) []corev1.Event {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		events := warningEvents(t, ctx, pool, kind)
		if len(events) == n || time.Now().After(deadline) {
			if len(events) != n {
				t.Fatalf("%d %s RenderWarnings events, want %d: %+v", len(events), kind, n, events)
			}
			return events
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestRenderWarnings: a MachineConfig as OpenShift's QE fixtures write it (spec 3.2 with spec
// 2's networkd section and a file's filesystem) renders without those keys, the pool says so in
// RenderWarnings and one Warning event, is not degraded, and is not told again on re-renders
// with the same warnings; once the keys are gone the condition turns False.
func TestRenderWarnings(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const role = "warned"
	qe := fileMC(role, "99-warned-qe", "/etc/qe", "qe")
	qe.Spec.Config.Raw = []byte(`{"ignition":{"version":"3.2.0"},"networkd":{"units":[{"name":"10-eth0.network","contents":"[Match]"}]},` +
		`"storage":{"files":[{"filesystem":"root","path":"/etc/qe","contents":{"source":"data:,qe"},"mode":420}]}}`)
	if err := k8sClient.Create(ctx, qe); err != nil {
		t.Fatal(err)
	}
	newPool(t, ctx, role)

	pool := waitFor(t, ctx, role, "RenderWarnings", func(p *mcfgv1.MachineConfigPool) bool {
		return p.Spec.Configuration.Name != "" && poolcondition.IsTrue(&p.Status, poolcondition.RenderWarnings)
	})
	rendered := &mcfgv1.MachineConfig{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: pool.Spec.Configuration.Name}, rendered); err != nil {
		t.Fatal(err)
	}
	raw := string(rendered.Spec.Config.Raw)
	if strings.Contains(raw, "networkd") || strings.Contains(raw, "filesystem") || !strings.Contains(raw, "/etc/qe") {
		t.Fatalf("rendered config is not what Ignition makes of the MachineConfig: %s", raw)
	}
	cond := poolcondition.Get(&pool.Status, poolcondition.RenderWarnings)
	for _, want := range []string{
		`MachineConfig "99-warned-qe": spec.config.networkd: unknown key "networkd"`, "(line 1 col 33)",
		`MachineConfig "99-warned-qe": spec.config.storage.files.0.filesystem: unknown key "filesystem"`,
	} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("RenderWarnings message lacks %q: %q", want, cond.Message)
		}
	}
	if cond.Reason != poolcondition.ReasonIgnitionWarnings {
		t.Errorf("reason %q", cond.Reason)
	}
	for _, c := range []mcfgv1.MachineConfigPoolConditionType{mcfgv1.MachineConfigPoolRenderDegraded, mcfgv1.MachineConfigPoolDegraded} {
		if poolcondition.IsTrue(&pool.Status, c) {
			t.Errorf("%s with only warnings", c)
		}
	}
	event := waitForEvents(t, ctx, role, corev1.EventTypeWarning, 1)[0]
	if event.Message != cond.Message {
		t.Errorf("event %q, want the condition's message", event.Message)
	}

	// Another render with the same warnings: no new event.
	first := pool.Spec.Configuration.Name
	if err := k8sClient.Create(ctx, fileMC(role, "50-warned-clean", "/etc/clean", "c")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, role, "re-render", targetIsNot(first))
	time.Sleep(time.Second) // an event would be emitted right after the status write
	if events := waitForEvents(t, ctx, role, corev1.EventTypeWarning, 1); events[0].Count != 1 {
		t.Errorf("the same warnings were told %d times", events[0].Count)
	}

	// The keys gone: False, and a Normal event.
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: qe.Name}, qe); err != nil {
		t.Fatal(err)
	}
	qe.Spec.Config.Raw = []byte(`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/qe","contents":{"source":"data:,qe"},"mode":420}]}}`)
	if err := k8sClient.Update(ctx, qe); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, role, "RenderWarnings False", func(p *mcfgv1.MachineConfigPool) bool {
		c := poolcondition.Get(&p.Status, poolcondition.RenderWarnings)
		return c != nil && c.Status == corev1.ConditionFalse && c.Message == ""
	})
	waitForEvents(t, ctx, role, corev1.EventTypeNormal, 1)
}
