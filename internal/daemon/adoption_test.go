package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/adoption"
	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/systemd"
	"github.com/mco-dev/mco/internal/machineconfignode"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

const (
	distroChrony = "pool 2.debian.pool.ntp.org iburst\nmakestep 1 3\n"
	poolChrony   = "server 10.0.0.1 iburst\nmakestep 1 3\n"
)

// hostWith is a root as a distribution left it: files mco did not write, no first-boot record.
func hostWith(t *testing.T, files map[string]string) string {
	t.Helper()
	root := newRoot(t)
	for p, data := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func offerAdoption(t *testing.T, ctx context.Context, name, target string) {
	t.Helper()
	// The node controller's offer, made here so the agent's side is tested on its own.
	n := node(t, ctx, name)
	if n.Annotations[protocol.AdoptionTargetAnnotation] == target {
		return
	}
	annotate(t, ctx, name, map[string]string{protocol.AdoptionTargetAnnotation: target})
}

func modTime(t *testing.T, root, p string) time.Time {
	t.Helper()
	info, err := os.Stat(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	return info.ModTime()
}

// TestAdoptHostThatAlreadyMatches: a node mco did not boot whose host already has its pool's
// config is Done in it without a drain, a reboot or a change to any of its files.
func TestAdoptHostThatAlreadyMatches(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const pool, name = "adoptsame", "adoptsame-0"
	files := map[string]string{"/etc/chrony.conf": poolChrony, "/etc/base.conf": "base\n"}
	r0 := customPool(t, ctx, pool, files)
	root := hostWith(t, files)
	before := modTime(t, root, "/etc/chrony.conf")
	createReadyNode(t, ctx, name, map[string]string{"node-role.kubernetes.io/" + pool: ""})
	ag := startAgent(t, name, root)
	offerAdoption(t, ctx, name, r0)
	n := awaitNode(t, ctx, name, "adopted, Done in "+r0, func(a map[string]string) bool {
		return doneIn(r0)(a) && a[protocol.DesiredConfigAnnotation] == r0
	})
	if _, ok := n.Annotations[protocol.AdoptionAnnotation]; ok {
		t.Errorf("adopted node still shows adoption %q", n.Annotations[protocol.AdoptionAnnotation])
	}
	if n.Spec.Unschedulable || n.Annotations[protocol.DesiredDrainAnnotation] != "" {
		t.Errorf("adopting a matching host drained it: %s", nodeSummary(n))
	}
	if got := modTime(t, root, "/etc/chrony.conf"); !got.Equal(before) {
		t.Errorf("/etc/chrony.conf was rewritten (mtime %v, was %v)", got, before)
	}
	if _, err := os.Lstat(filepath.Join(root, apply.JournalPath)); !os.IsNotExist(err) {
		t.Errorf("a transaction ran: %v", err)
	}
	if ag.reboots.Load() != 0 || len(ag.sd.Ops()) != 0 {
		t.Errorf("reboots %d, systemd ops %v", ag.reboots.Load(), ag.sd.Ops())
	}
	awaitEvent(t, ctx, name, "Adopted")

	// A pool whose config holds nothing (config/kubeadm's empty bases): every host is in it.
	const emptyPool, emptyName = "adoptempty", "adoptempty-0"
	e0 := customPool(t, ctx, emptyPool, map[string]string{})
	bare := newRoot(t)
	createReadyNode(t, ctx, emptyName, map[string]string{"node-role.kubernetes.io/" + emptyPool: ""})
	startAgent(t, emptyName, bare)
	offerAdoption(t, ctx, emptyName, e0)
	awaitNode(t, ctx, emptyName, "adopted, Done in "+e0, doneIn(e0))
}

// TestAdoptionWaitsForTheAdmin: a host that differs from its pool's config is not touched until
// the admin approves; the Node shows what adopting would write, with the diff, and the
// disruption; once approved (the node controller sets desiredConfig) the node is drained,
// written with the host's originals kept, rebooted and Done; `mco daemon revert` then gives
// the host its own files back.
func TestAdoptionWaitsForTheAdmin(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const pool, name = "adoptdiff", "adoptdiff-0"
	r0 := customPool(t, ctx, pool, map[string]string{"/etc/chrony.conf": poolChrony, "/etc/base.conf": "base\n"})
	root := hostWith(t, map[string]string{"/etc/chrony.conf": distroChrony, "/etc/ssh/sshd_config.d/50-distro.conf": "PasswordAuthentication no\n"})
	createReadyNode(t, ctx, name, map[string]string{"node-role.kubernetes.io/" + pool: ""})
	ag := startAgent(t, name, root)
	offerAdoption(t, ctx, name, r0)
	n := awaitNode(t, ctx, name, "waiting for adoption", func(a map[string]string) bool {
		return a[protocol.AdoptionAnnotation] == protocol.AdoptionPending && a[protocol.AdoptionPlanAnnotation] != ""
	})
	p, err := adoption.Decode(n.Annotations[protocol.AdoptionPlanAnnotation])
	if err != nil {
		t.Fatal(err)
	}
	if p.Target != r0 || !p.Reboot || !p.Drain || len(p.Files) != 2 {
		t.Fatalf("plan %+v", p)
	}
	byPath := map[string]adoption.FileChange{}
	for _, f := range p.Files {
		byPath[f.Path] = f
	}
	if f := byPath["/etc/chrony.conf"]; f.Change != adoption.ChangeContent || !strings.Contains(f.Diff, "-pool 2.debian.pool.ntp.org iburst") ||
		!strings.Contains(f.Diff, "+server 10.0.0.1 iburst") {
		t.Errorf("chrony.conf in the plan: %+v", f)
	}
	if f := byPath["/etc/base.conf"]; f.Change != adoption.ChangeCreate {
		t.Errorf("base.conf in the plan: %+v", f)
	}
	if !strings.Contains(p.Summary(), "would write 2 files") || !strings.Contains(p.Summary(), "reboot") {
		t.Errorf("summary %q", p.Summary())
	}
	awaitMCN(t, ctx, name, "AdoptionPending with the plan's summary", func(m *mcfgv1.MachineConfigNode) bool {
		c := meta.FindStatusCondition(m.Status.Conditions, string(machineconfignode.TypeAdoptionPending))
		return c != nil && c.Status == metav1.ConditionTrue && c.Message == p.Summary()
	})
	if ev := awaitEvent(t, ctx, name, "AdoptionPending"); !strings.Contains(ev.Message, "mco adopt "+name) {
		t.Errorf("event %q does not say how to approve", ev.Message)
	}
	time.Sleep(2 * time.Second) // give a wrong agent time to go on
	n = node(t, ctx, name)
	if n.Annotations[protocol.CurrentConfigAnnotation] != "" || n.Annotations[protocol.DesiredDrainAnnotation] != "" || n.Spec.Unschedulable {
		t.Fatalf("an unapproved adoption went on: %s", nodeSummary(n))
	}
	mustContain(t, root, "/etc/chrony.conf", distroChrony)
	if _, err := os.Lstat(filepath.Join(root, "/etc/base.conf")); !os.IsNotExist(err) {
		t.Fatalf("/etc/base.conf written before approval (%v)", err)
	}

	// Approved: the node controller gives the node its pool's target within maxUnavailable.
	annotate(t, ctx, name, map[string]string{protocol.DesiredConfigAnnotation: r0})
	n = awaitNode(t, ctx, name, "adopted, Done in "+r0, doneIn(r0))
	awaitMCN(t, ctx, name, "AdoptionPending False once adopted", func(m *mcfgv1.MachineConfigNode) bool {
		c := meta.FindStatusCondition(m.Status.Conditions, string(machineconfignode.TypeAdoptionPending))
		return c != nil && c.Status == metav1.ConditionFalse
	})
	if _, ok := n.Annotations[protocol.AdoptionPlanAnnotation]; ok {
		t.Errorf("adopted node still carries its plan")
	}
	if ag.reboots.Load() != 1 {
		t.Errorf("%d reboots, want the planned 1", ag.reboots.Load())
	}
	if n.Annotations[protocol.LastAppliedDrainAnnotation] != protocol.UncordonRequest(r0) {
		t.Errorf("not drained and uncordoned: %s", nodeSummary(n))
	}
	mustContain(t, root, "/etc/chrony.conf", poolChrony)
	mustContain(t, root, "/etc/base.conf", "base\n")
	mustContain(t, root, "/etc/ssh/sshd_config.d/50-distro.conf", "PasswordAuthentication no\n")

	// Back to the distribution's files.
	ag.stop()
	<-ag.done
	reverted, err := daemon.Revert(ctx, root, systemd.New(root))
	if err != nil || reverted != r0 {
		t.Fatalf("revert: %q %v", reverted, err)
	}
	mustContain(t, root, "/etc/chrony.conf", distroChrony)
	if _, err := os.Lstat(filepath.Join(root, "/etc/base.conf")); !os.IsNotExist(err) {
		t.Errorf("/etc/base.conf, which the host did not have, is still there after revert (%v)", err)
	}
	if _, err := os.Lstat(filepath.Join(root, apply.CurrentConfigPath)); !os.IsNotExist(err) {
		t.Errorf("the config record is still there after revert (%v)", err)
	}
}
