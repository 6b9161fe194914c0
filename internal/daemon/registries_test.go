package daemon_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

const registriesConf = "/etc/containers/registries.conf"

const oneMirror = `unqualified-search-registries = ["registry.example.org"]

[[registry]]
  location = "apps.example.org/team/app"
  [[registry.mirror]]
    location = "mirror.example.net/team/app"
    pull-from-mirror = "digest-only"
`

const twoMirrors = oneMirror + `  [[registry.mirror]]
    location = "backup.example.net/team/app"
    pull-from-mirror = "digest-only"
`

// TestRegistriesConfDrainsOnlyWhenUnsafe: with the default policy (OpenShift's Special action),
// adding a digest-only mirror reloads crio without a drain and the agent's log says why;
// removing it again drains, then reloads crio. Neither reboots.
func TestRegistriesConfDrainsOnlyWhenUnsafe(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const pool, name = "registries", "registries-0"
	r0 := customPool(t, ctx, pool, map[string]string{registriesConf: oneMirror})
	root := newRoot(t)
	provision(t, root, renderedConfig(t, ctx, r0))
	createReadyNode(t, ctx, name, map[string]string{"node-role.kubernetes.io/" + pool: ""})
	var log testenv.LogBuffer
	ag := startAgentWith(t, name, root, func(o *daemon.Options) { o.Log = slog.New(slog.NewTextHandler(&log, nil)) }, nil)
	awaitNode(t, ctx, name, "Done in "+r0, doneIn(r0))

	// 1. A digest-only mirror added: no drain.
	createPoolConfig(t, ctx, pool, "50-"+pool+"-mirror", map[string]string{registriesConf: twoMirrors})
	r1 := awaitPoolTarget(t, ctx, pool, r0)
	n := awaitNode(t, ctx, name, "Done in "+r1, doneIn(r1))
	if dd := n.Annotations[protocol.DesiredDrainAnnotation]; dd == protocol.DrainRequest(r1) || dd == protocol.UncordonRequest(r1) {
		t.Errorf("drained for a digest-only mirror: %s", nodeSummary(n))
	}
	if !slices.Contains(ag.sd.Ops(), "reload crio.service") {
		t.Errorf("crio not reloaded; systemd saw %v", ag.sd.Ops())
	}
	mustContain(t, root, registriesConf, twoMirrors)
	const skipped = `drain=false drainReason="file /etc/containers/registries.conf: file policy /etc/containers/registries.conf ` +
		`(Special: no drain, only safe changes: added digest-only mirror backup.example.net/team/app to apps.example.org/team/app)"`
	if !strings.Contains(log.String(), skipped) {
		t.Errorf("the agent's log does not say why the drain was skipped (want %s):\n%s", skipped, log.String())
	}

	// 2. The mirror removed again: drain, reload, uncordon.
	reloads := len(ag.sd.Ops())
	createPoolConfig(t, ctx, pool, "60-"+pool+"-no-mirror", map[string]string{registriesConf: oneMirror})
	r2 := awaitPoolTarget(t, ctx, pool, r1)
	n = awaitNode(t, ctx, name, "Done in "+r2, doneIn(r2))
	if n.Annotations[protocol.LastAppliedDrainAnnotation] != protocol.UncordonRequest(r2) || n.Spec.Unschedulable {
		t.Errorf("not drained and uncordoned for a removed mirror: %s unschedulable=%v", nodeSummary(n), n.Spec.Unschedulable)
	}
	if !slices.Contains(ag.sd.Ops()[reloads:], "reload crio.service") {
		t.Errorf("crio not reloaded; systemd saw %v", ag.sd.Ops())
	}
	const drained = `drain=true drainReason="file /etc/containers/registries.conf: file policy /etc/containers/registries.conf ` +
		`(Special: drain, mirror backup.example.net/team/app of registry apps.example.org/team/app removed)"`
	if !strings.Contains(log.String(), drained) {
		t.Errorf("the agent's log does not say why it drained (want %s):\n%s", drained, log.String())
	}
	// The drained update is planned again on each wake while it waits for the drain; it is
	// logged once.
	if got := strings.Count(log.String(), `to=`+r2+` actions=`); got != 1 {
		t.Errorf("the update to %s was logged as planned %d times, want 1:\n%s", r2, got, log.String())
	}
	if got := ag.reboots.Load(); got != 0 {
		t.Errorf("%d reboots for registries.conf changes, want 0", got)
	}
}
