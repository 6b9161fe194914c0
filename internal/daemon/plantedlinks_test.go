package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestPlantedLinksAreRefusedBeforeTheDrain is issue 37's two links planted on a worker: a
// MachineConfig writing a file behind one is refused before any drain or write, Degraded
// naming the path and the link; once the MachineConfig is deleted the node is Done again with
// no hand.
func TestPlantedLinksAreRefusedBeforeTheDrain(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	cases := []struct {
		pool, file string
		plant      func(t *testing.T, root string)
		reason     string
		// written is where a write through the link would have landed, relative to root.
		written string
	}{
		{pool: "plantedtmp", file: "/etc/x/f",
			plant: func(t *testing.T, root string) {
				must(t, os.MkdirAll(filepath.Join(root, "tmp"), 0o1777))
				must(t, os.Symlink("../../../../../../../../tmp", filepath.Join(root, "etc/x")))
			},
			reason:  `file /etc/x/f: /etc/x is a symbolic link to "../../../../../../../../tmp", which leaves the host root`,
			written: "tmp/f"},
		{pool: "plantedproc", file: "/etc/y/comm",
			plant: func(t *testing.T, root string) {
				testenv.MountProc(t, root)
				must(t, os.Symlink("/proc/self", filepath.Join(root, "etc/y")))
			},
			reason: `file /etc/y/comm: /etc/y is a symbolic link to "/proc/self", which leads into /proc, a kernel file system the agent never writes to`},
	}
	for _, c := range cases {
		t.Run(c.pool, func(t *testing.T) {
			ctx := context.Background()
			name := c.pool + "-0"
			r0 := customPool(t, ctx, c.pool, map[string]string{"/etc/base.conf": "base"})
			root := newRoot(t)
			provision(t, root, renderedConfig(t, ctx, r0))
			c.plant(t, root)
			createReadyNode(t, ctx, name, map[string]string{"node-role.kubernetes.io/" + c.pool: ""})
			ag := startAgent(t, name, root)
			awaitNode(t, ctx, name, "Done in "+r0, doneIn(r0))

			mcName := "50-" + c.pool + "-planted"
			createPoolConfig(t, ctx, c.pool, mcName, map[string]string{c.file: "owned", "/etc/extra.conf": "x"})
			r1 := awaitPoolTarget(t, ctx, c.pool, r0)
			want := "refusing " + r1 + ", nothing was drained or written: " + c.reason
			awaitNode(t, ctx, name, "Degraded by the refusal", degradedBy(want))
			if ev := awaitEvent(t, ctx, name, "UpdateRefused"); ev.Type != "Warning" {
				t.Errorf("event %s %q", ev.Type, ev.Message)
			}
			time.Sleep(2 * time.Second) // give a wrong agent time to go on
			n := node(t, ctx, name)
			if d := n.Annotations[protocol.DesiredDrainAnnotation]; d == protocol.DrainRequest(r1) || n.Spec.Unschedulable {
				t.Errorf("a refused update asked for a drain: %s unschedulable=%v", nodeSummary(n), n.Spec.Unschedulable)
			}
			for _, p := range []string{"etc/extra.conf", c.written} {
				if _, err := os.Lstat(filepath.Join(root, p)); p != "" && !os.IsNotExist(err) {
					t.Errorf("%s was written (err=%v)", p, err)
				}
			}

			must(t, env.Client.Delete(ctx, &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: mcName}}))
			awaitNode(t, ctx, name, "Done in "+r0+" again", doneIn(r0))
			if ag.reboots.Load() != 0 {
				t.Errorf("%d reboots", ag.reboots.Load())
			}
		})
	}
}

// TestNodeStrandedByAMissingFileComesBack: a node whose committed config's file went missing
// behind a link (written by an agent that followed it into /tmp, emptied by a reboot) is
// Degraded by the drift. Deleting the MachineConfig that wrote the file brings it back with no
// hand (the update to a config without the file goes past its absence); in the pool that
// keeps the MachineConfig, the force file rewrites the config once the link is gone.
func TestNodeStrandedByAMissingFileComesBack(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	strand := func(t *testing.T, pool string) (name, root, r0, r1 string) {
		name = pool + "-0"
		r0 = customPool(t, ctx, pool, map[string]string{"/etc/base.conf": "base"})
		root = newRoot(t)
		provision(t, root, renderedConfig(t, ctx, r0))
		createReadyNode(t, ctx, name, map[string]string{"node-role.kubernetes.io/" + pool: ""})
		startAgentWith(t, name, root, func(o *daemon.Options) { o.ForceFileInterval = 200 * time.Millisecond }, nil)
		awaitNode(t, ctx, name, "Done in "+r0, doneIn(r0))
		createPoolConfig(t, ctx, pool, "50-"+pool+"-x", map[string]string{"/etc/x/f": "owned"})
		r1 = awaitPoolTarget(t, ctx, pool, r0)
		awaitNode(t, ctx, name, "Done in "+r1, doneIn(r1))
		// What an older agent left: the file behind a climbing link to a /tmp a reboot emptied.
		must(t, os.RemoveAll(filepath.Join(root, "etc/x")))
		must(t, os.MkdirAll(filepath.Join(root, "tmp"), 0o1777))
		must(t, os.Symlink("../../../../../../../../tmp", filepath.Join(root, "etc/x")))
		awaitNode(t, ctx, name, "Degraded by the missing file", degradedBy(`missing file: "/etc/x/f"`))
		return name, root, r0, r1
	}

	t.Run("deleting the MachineConfig", func(t *testing.T) {
		name, root, r0, r1 := strand(t, "strandeddelete")
		must(t, env.Client.Delete(ctx, &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: "50-strandeddelete-x"}}))
		if r2 := awaitPoolTarget(t, ctx, "strandeddelete", r1); r2 != r0 {
			t.Fatalf("the pool targets %s, not %s", r2, r0)
		}
		awaitNode(t, ctx, name, "Done in "+r0, doneIn(r0))
		if target, err := os.Readlink(filepath.Join(root, "etc/x")); err != nil || target != "../../../../../../../../tmp" {
			t.Errorf("the planted link changed: %q, %v", target, err)
		}
	})

	t.Run("the force file", func(t *testing.T) {
		name, root, _, r1 := strand(t, "strandedforce")
		must(t, os.Remove(filepath.Join(root, "etc/x"))) // the admin removes the link
		time.Sleep(2 * time.Second)                      // nothing but the force file wakes the agent now
		if n := node(t, ctx, name); n.Annotations[protocol.StateAnnotation] == string(protocol.NodeDone) {
			t.Fatalf("Done without the force file: %s", nodeSummary(n))
		}
		must(t, os.WriteFile(filepath.Join(root, daemon.ForceFilePath), nil, 0o644))
		awaitNode(t, ctx, name, "Done in "+r1+" after the force file", doneIn(r1))
		mustContain(t, root, "/etc/x/f", "owned")
		if _, err := os.Lstat(filepath.Join(root, daemon.ForceFilePath)); !os.IsNotExist(err) {
			t.Errorf("the force file is still there (err=%v)", err)
		}
	})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
