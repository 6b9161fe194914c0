package clustertest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/testenv"
)

// OneApplySources are the MachineConfigs of test/e2e/testdata/one-apply, in the order kubectl
// creates them: three files, a unit, a kernel argument.
var OneApplySources = []string{"50-worker-one-apply-a", "50-worker-one-apply-b", "50-worker-one-apply-c",
	"60-worker-one-apply-unit", "80-worker-one-apply-kargs"}

// OneApplyOneReboot is issue 24's demo case on real machines: one `kubectl apply -f dir/` of
// five MachineConfigs (three files, a unit, a kernel argument) reboots each machine exactly
// once, and the pool ends on a rendered config holding all five. kubectl creates them one after
// the other; a pool rendered after the first would send a machine through a drain and a reboot
// for a partial config, then again for the whole. It returns how long the rollout took, from
// the apply to the pool Updated. On failure it records the cluster's state in the test's log.
func (cl *Cluster) OneApplyOneReboot(t *testing.T, ctx context.Context, machines []string) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, 8*time.Minute)
	defer cancel()
	kubectl := testenv.RequireTool(t, "kubectl")
	cl.Watcher.Reset()
	t.Cleanup(func() {
		if t.Failed() {
			cl.LogState(t, machines)
		}
	})
	dir := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "one-apply")
	before := cl.Pool(t, ctx).Spec.Configuration.Name
	boots := map[string]int{}
	for _, m := range machines {
		boots[m] = cl.Boots(t, m)
	}

	start := time.Now()
	if _, err := Run(ctx, kubectl, "--kubeconfig", filepath.Join(cl.Dir, "kubeconfig"), "apply", "-f", dir); err != nil {
		t.Fatal(err)
	}
	target := cl.WaitUpdatedWith(t, ctx, before, int32(len(machines)), OneApplySources[len(OneApplySources)-1])
	took := time.Since(start)

	p := cl.Pool(t, ctx)
	for _, s := range OneApplySources {
		if !HasSource(p, s) {
			t.Errorf("the pool's config %s is not rendered from %s", target, s)
		}
	}
	for _, m := range machines {
		if got := cl.Boots(t, m) - boots[m]; got != 1 {
			t.Errorf("%s booted %d times for one kubectl apply, want exactly 1", m, got)
		}
		if cmdline := cl.InMachine(t, ctx, m, "cat", "/proc/cmdline"); !strings.Contains(" "+cmdline+" ", " mco.one_apply=1 ") {
			t.Errorf("%s: /proc/cmdline = %q, want mco.one_apply=1", m, cmdline)
		}
		for _, f := range []string{"a", "b", "c"} {
			if got := cl.NodeFile(ctx, m, "/etc/mco-one-apply/"+f+".conf"); got != "file "+f+"\n" {
				t.Errorf("%s: /etc/mco-one-apply/%s.conf = %q", m, f, got)
			}
		}
		if got := cl.InMachine(t, ctx, m, "systemctl", "is-active", "one-apply.service"); got != "active" {
			t.Errorf("%s: one-apply.service is %s", m, got)
		}
	}
	if most, who := cl.Watcher.MaxUnavailable(); most > 1 {
		t.Errorf("%d machines were unavailable at once (%v); maxUnavailable is 1", most, who)
	}
	return took
}
