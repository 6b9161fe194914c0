package daemon_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/daemon/runningkubelet"
	"github.com/mco-dev/mco/internal/kubeletfiles"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// pinnedStartFile in a fake kubelet's root holds the time it claims to have started at.
const pinnedStartFile = "/run/fake-kubelet-started"

const kubeadmKubeletConfig = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 110\ncgroupDriver: systemd\n"

// fakeKubelet is a kubelet "running" on a test root with args: its files are read from the
// root as the kubelet would read them, and it "starts" whenever the agent restarts
// kubelet.service.
func fakeKubelet(root string, ops func() []string, args ...string) func() (runningkubelet.Kubelet, time.Time, bool, error) {
	var mu sync.Mutex
	started, restarts := time.Now(), 0
	within := func(p string) string { return filepath.Join(root, p) }
	return func() (runningkubelet.Kubelet, time.Time, bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if n := len(slices.DeleteFunc(ops(), func(op string) bool { return op != "restart kubelet.service" })); n > restarts {
			started, restarts = time.Now(), n
		}
		at := started
		if pinned, err := os.ReadFile(within(pinnedStartFile)); err == nil {
			at, _ = time.Parse(time.RFC3339, strings.TrimSpace(string(pinned)))
		}
		k, err := runningkubelet.Read(append([]string{"/usr/bin/kubelet"}, args...), "/",
			func(p string) ([]byte, error) { return os.ReadFile(within(p)) },
			func(d string) ([]string, error) {
				var names []string
				err := filepath.WalkDir(within(d), func(p string, e fs.DirEntry, err error) error {
					if err == nil && !e.IsDir() {
						rel, _ := filepath.Rel(within(d), p)
						names = append(names, filepath.ToSlash(rel))
					}
					return err
				})
				return names, err
			})
		return k, at, true, err
	}
}

// TestKubeletDropIn: a config's kubelet drop-in restarts the kubelet (no drain, no reboot) and
// the node is Done only while the running kubelet has its settings: a later drop-in that
// overrides one makes it Degraded, naming the field. A kubelet that reads no drop-in directory
// refuses the update before any drain or write, naming the flag to set.
func TestKubeletDropIn(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const pool = "dropin"
	r0 := customPool(t, ctx, pool, map[string]string{"/etc/base.conf": "base"})
	dropIn := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 42\n"

	start := func(name string, args ...string) (string, *agent) {
		root := newRoot(t)
		provision(t, root, renderedConfig(t, ctx, r0))
		cfg := filepath.Join(root, "/var/lib/kubelet/config.yaml")
		if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, []byte(kubeadmKubeletConfig), 0o644); err != nil {
			t.Fatal(err)
		}
		createReadyNode(t, ctx, name, map[string]string{"node-role.kubernetes.io/" + pool: ""})
		var ag *agent
		ag = startAgentWith(t, name, root, func(o *daemon.Options) {
			// ag is read when the kubelet is first asked for, after startAgentWith returned:
			// the first pass settles r0, which has no drop-in.
			o.Kubelet = fakeKubelet(root, func() []string { return ag.sd.Ops() }, args...)
		}, nil)
		return root, ag
	}
	root, ag := start("dropin-0", "--config=/var/lib/kubelet/config.yaml", "--config-dir="+kubeletfiles.DropInDir)
	_, bare := start("dropin-1", "--config=/var/lib/kubelet/config.yaml")
	awaitNode(t, ctx, "dropin-0", "Done in "+r0, doneIn(r0))
	awaitNode(t, ctx, "dropin-1", "Done in "+r0, doneIn(r0))

	createPoolConfig(t, ctx, pool, "99-"+pool+"-generated-kubelet", map[string]string{kubeletfiles.DropInPath: dropIn})
	r1 := awaitPoolTarget(t, ctx, pool, r0)
	n := awaitNode(t, ctx, "dropin-0", "Done in "+r1, doneIn(r1))
	if !slices.Contains(ag.sd.Ops(), "restart kubelet.service") || ag.reboots.Load() != 0 {
		t.Errorf("systemd saw %v, %d reboots; want the kubelet restarted and no reboot", ag.sd.Ops(), ag.reboots.Load())
	}
	if dd := n.Annotations[protocol.DesiredDrainAnnotation]; dd == protocol.DrainRequest(r1) {
		t.Errorf("drained for a kubelet restart: %s", nodeSummary(n))
	}

	n = awaitNode(t, ctx, "dropin-1", "refusing "+r1, func(a map[string]string) bool {
		return a[protocol.StateAnnotation] == string(protocol.NodeDegraded) && strings.Contains(a[protocol.ReasonAnnotation], "refusing "+r1)
	})
	for _, want := range []string{"--config-dir=" + kubeletfiles.DropInDir, "nothing was drained or written"} {
		if !strings.Contains(n.Annotations[protocol.ReasonAnnotation], want) {
			t.Errorf("reason %q does not say %q", n.Annotations[protocol.ReasonAnnotation], want)
		}
	}
	if slices.Contains(bare.sd.Ops(), "restart kubelet.service") {
		t.Errorf("the refused node's kubelet was restarted")
	}

	// A later drop-in of the admin's overrides maxPods: the config is no longer in effect.
	later := filepath.Join(root, kubeletfiles.DropInDir, "90-admin.conf")
	if err := os.WriteFile(later, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	annotate(t, ctx, "dropin-0", map[string]string{"test.mco.dev/poke": "later-drop-in"})
	n = awaitNode(t, ctx, "dropin-0", "Degraded: not in effect", func(a map[string]string) bool {
		return a[protocol.StateAnnotation] == string(protocol.NodeDegraded) && strings.Contains(a[protocol.ReasonAnnotation], "not in effect")
	})
	if r := n.Annotations[protocol.ReasonAnnotation]; !strings.Contains(r, "maxPods") {
		t.Errorf("reason %q does not name maxPods", r)
	}
	if err := os.Remove(later); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	annotate(t, ctx, "dropin-0", map[string]string{"test.mco.dev/poke": "later-drop-in-gone"})
	awaitNode(t, ctx, "dropin-0", "Done again in "+r1, doneIn(r1))

	// A kubelet that started long before the file was written never read it.
	if err := os.MkdirAll(filepath.Join(root, "/run"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, pinnedStartFile), []byte(time.Now().Add(-time.Hour).Format(time.RFC3339)), 0o644); err != nil {
		t.Fatal(err)
	}
	annotate(t, ctx, "dropin-0", map[string]string{"test.mco.dev/poke": "old-kubelet"})
	n = awaitNode(t, ctx, "dropin-0", "Degraded: an old kubelet", func(a map[string]string) bool {
		return a[protocol.StateAnnotation] == string(protocol.NodeDegraded) && strings.Contains(a[protocol.ReasonAnnotation], "before the file was written")
	})
}
