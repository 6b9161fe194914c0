package daemon_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

func setOf(t testing.TB, mc *mcfgv1.MachineConfig) nodefiles.Set {
	t.Helper()
	cfg, err := ignition.Parse(mc.Spec.Config.Raw)
	if err != nil {
		t.Fatal(err)
	}
	set, err := nodefiles.FromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// stickJournal leaves root, in config from, as a crash in the middle of the update to `to`
// would, except that the backups of the files the update replaced are gone: no rollback can
// succeed until restore puts them back.
func stickJournal(t testing.TB, root string, from, to *mcfgv1.MachineConfig) (restore func()) {
	t.Helper()
	ctx := context.Background()
	r, err := noderoot.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	record, _ := json.Marshal(to)
	a := &apply.Applier{Root: r, Systemd: systemd.New(root)}
	txn, err := a.Begin(ctx, apply.Request{From: from.Name, To: to.Name, Old: setOf(t, from), New: setOf(t, to), Record: record})
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	backups := filepath.Join(root, apply.BackupDir)
	aside := t.TempDir()
	entries, err := os.ReadDir(backups)
	if err != nil || len(entries) == 0 {
		t.Fatalf("the update replaced no file, so its rollback cannot fail: %v", err)
	}
	move := func(from, to string) {
		for _, e := range entries {
			if err := os.Rename(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	move(backups, aside)
	return func() { move(aside, backups) }
}

// createConfigs creates rendered configs in no pool: the test moves the node itself.
func createConfigs(t testing.TB, ctx context.Context, mcs ...*mcfgv1.MachineConfig) {
	t.Helper()
	for _, mc := range mcs {
		mc.SetLabels(nil)
		create(t, ctx, mc)
	}
}

func degradedBy(substrings ...string) func(map[string]string) bool {
	return func(a map[string]string) bool {
		if a[protocol.StateAnnotation] != string(protocol.NodeDegraded) {
			return false
		}
		for _, s := range substrings {
			if !strings.Contains(a[protocol.ReasonAnnotation], s) {
				return false
			}
		}
		return true
	}
}

var attemptRE = regexp.MustCompile(`\(attempt (\d+),`)

func attempt(t testing.TB, reason string) int {
	t.Helper()
	m := attemptRE.FindStringSubmatch(reason)
	if m == nil {
		t.Fatalf("reason names no attempt: %q", reason)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// awaitEvent waits for an event of reason about the Node.
func awaitEvent(t testing.TB, ctx context.Context, nodeName, reason string) corev1.Event {
	t.Helper()
	var found corev1.Event
	eventually(t, time.Minute, "event "+reason+" for "+nodeName, func() (bool, string) {
		var list corev1.EventList
		if err := env.Client.List(ctx, &list, client.InNamespace(metav1.NamespaceDefault)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.InvolvedObject.Name == nodeName {
				seen = append(seen, ev.Reason)
				if ev.Reason == reason {
					found = ev
					return true, ""
				}
			}
		}
		return false, strings.Join(seen, ", ")
	})
	return found
}

// TestStuckJournalIsRetriedUntilFixed: an agent whose root holds a journal that cannot be
// rolled back starts anyway, reports the node Degraded naming the update, the path, the next
// retry and the remedies, retries on a backoff (not in a hot loop), and once the cause is
// fixed recovers by itself, reaches Done and updates as usual.
func TestStuckJournalIsRetriedUntilFixed(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const name = "stuck-journal"
	r0 := machineConfig("rendered-stuck-0", map[string]string{"/etc/containers/registries.d/stuck.yaml": "zero"})
	r1 := machineConfig("rendered-stuck-1", map[string]string{"/etc/containers/registries.d/stuck.yaml": "one",
		"/etc/containers/registries.d/stuck-new.yaml": "new"})
	createConfigs(t, ctx, r0, r1)
	root := newRoot(t)
	provision(t, root, r0)
	restore := stickJournal(t, root, r0, r1)
	createBareNode(t, ctx, name)
	startAgentWith(t, name, root, func(o *daemon.Options) { o.JournalRetry = 500 * time.Millisecond }, nil)

	n := awaitNode(t, ctx, name, "Degraded by the stuck journal", degradedBy(
		`the update from "rendered-stuck-0" to "rendered-stuck-1" could not be rolled back`,
		"rolling back /etc/containers/registries.d/stuck.yaml",
		"the agent retries at", "mco daemon recover", daemon.ForceFilePath))
	t.Logf("reason: %s", n.Annotations[protocol.ReasonAnnotation])
	awaitEvent(t, ctx, name, "JournalStuck")
	// Retries at 0.5, 1.5, 3.5 s after the first: the agent retries (waited for, however loaded
	// the machine), and when the third attempt is first seen there have been a few, not the
	// hundreds of a retry without backoff.
	stuck := degradedBy("could not be rolled back")
	n = awaitNode(t, ctx, name, "still Degraded by the stuck journal, retried twice", func(a map[string]string) bool {
		return stuck(a) && attemptRE.MatchString(a[protocol.ReasonAnnotation]) && attempt(t, a[protocol.ReasonAnnotation]) >= 3
	})
	if a := attempt(t, n.Annotations[protocol.ReasonAnnotation]); a > 5 {
		t.Errorf("attempt %d when the third was first seen; want a retry on a 0.5 s doubling backoff", a)
	}
	mustContain(t, root, "/etc/containers/registries.d/stuck-new.yaml", "new") // left as the failed rollback left it

	restore()
	start := time.Now()
	awaitNode(t, ctx, name, "Done in "+r0.Name+" after the fix", doneIn(r0.Name))
	t.Logf("recovered %v after the fix", time.Since(start).Round(time.Millisecond))
	awaitEvent(t, ctx, name, "UpdateRolledBack")
	mustContain(t, root, "/etc/containers/registries.d/stuck.yaml", "zero")
	mustBeAbsent(t, root, "/etc/containers/registries.d/stuck-new.yaml", apply.JournalPath)

	annotate(t, ctx, name, map[string]string{protocol.DesiredConfigAnnotation: r1.Name})
	awaitNode(t, ctx, name, "Done in "+r1.Name, doneIn(r1.Name))
	mustContain(t, root, "/etc/containers/registries.d/stuck.yaml", "one")
	mustContain(t, root, "/etc/containers/registries.d/stuck-new.yaml", "new")
}

// TestForceFileAbandonsStuckJournal: the force file gives a stuck rollback up, keeps the
// journal for inspection, and the full rewrite leaves the node Done in its desired config with
// exactly that config's files.
func TestForceFileAbandonsStuckJournal(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const name = "stuck-force"
	dir := "/etc/containers/registries.d"
	r0 := machineConfig("rendered-force-0", map[string]string{dir + "/force.yaml": "zero", dir + "/force-old.yaml": "old"})
	r1 := machineConfig("rendered-force-1", map[string]string{dir + "/force.yaml": "one", dir + "/force-new.yaml": "new"})
	createConfigs(t, ctx, r0, r1)
	root := newRoot(t)
	provision(t, root, r0)
	stickJournal(t, root, r0, r1)
	createBareNode(t, ctx, name)
	ag := startAgentWith(t, name, root, func(o *daemon.Options) { o.JournalRetry = 500 * time.Millisecond }, nil)
	awaitNode(t, ctx, name, "Degraded by the stuck journal", degradedBy("could not be rolled back"))
	annotate(t, ctx, name, map[string]string{protocol.DesiredConfigAnnotation: r1.Name})

	if err := os.WriteFile(filepath.Join(root, daemon.ForceFilePath), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	awaitNode(t, ctx, name, "Done in "+r1.Name, doneIn(r1.Name))
	ev := awaitEvent(t, ctx, name, "JournalAbandoned")
	if !strings.Contains(ev.Message, `"rendered-force-0" to "rendered-force-1"`) || !strings.Contains(ev.Message, "journal.abandoned-") {
		t.Errorf("JournalAbandoned event %q does not name the update and where its journal is", ev.Message)
	}
	if got := ag.reboots.Load(); got != 1 {
		t.Errorf("rebooted %d times; the force file rewrites and reboots once", got)
	}
	entries, err := os.ReadDir(filepath.Join(root, dir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"force-new.yaml", "force.yaml"}; !slices.Equal(names, want) {
		t.Errorf("%s holds %v, want exactly %v", dir, names, want)
	}
	mustContain(t, root, dir+"/force.yaml", "one")
	mustContain(t, root, dir+"/force-new.yaml", "new")
	mustBeAbsent(t, root, apply.JournalPath, daemon.ForceFilePath)
	kept, _ := filepath.Glob(filepath.Join(root, apply.StateDir, "journal.abandoned-*", "journal"))
	if len(kept) != 1 {
		t.Errorf("abandoned journals kept: %v, want one", kept)
	}
}

func mustBeAbsent(t testing.TB, root string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(filepath.Join(root, p)); !os.IsNotExist(err) {
			t.Errorf("%s is still in %s (%v)", p, root, err)
		}
	}
}

// TestRecoverByHandUnsticksRunningAgent: an admin who fixes the cause and runs `mco daemon
// recover` (its core, RecoverRoot) while the agent waits out a long backoff sees the agent
// notice at its next wake-up, not only at the retry, and reach Done.
func TestRecoverByHandUnsticksRunningAgent(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const name = "stuck-by-hand"
	dir := "/etc/containers/registries.d"
	r0 := machineConfig("rendered-by-hand-0", map[string]string{dir + "/hand.yaml": "zero"})
	r1 := machineConfig("rendered-by-hand-1", map[string]string{dir + "/hand.yaml": "one"})
	createConfigs(t, ctx, r0, r1)
	root := newRoot(t)
	provision(t, root, r0)
	restore := stickJournal(t, root, r0, r1)
	createBareNode(t, ctx, name)
	startAgentWith(t, name, root, func(o *daemon.Options) { o.JournalRetry = time.Hour }, nil)
	awaitNode(t, ctx, name, "Degraded by the stuck journal", degradedBy("could not be rolled back"))

	restore()
	rec, err := daemon.RecoverRoot(ctx, root)
	if err != nil || rec.Outcome != apply.RolledBack {
		t.Fatalf("RecoverRoot = %+v, %v; want rolled back", rec, err)
	}
	annotate(t, ctx, name, map[string]string{"example.com/poke": "1"}) // any change to the Node wakes the agent
	awaitNode(t, ctx, name, "Done in "+r0.Name, doneIn(r0.Name))
	awaitEvent(t, ctx, name, "JournalCleared")
	mustContain(t, root, dir+"/hand.yaml", "zero")
}
