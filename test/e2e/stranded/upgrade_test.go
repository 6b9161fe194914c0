package stranded

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubectl/pkg/util/podutils"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/daemon/failpoint"
	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
)

// upgradeVersion is the version string of the image mco upgrades itself to.
const upgradeVersion = "e2e-upgrade"

// mco upgrades itself mid-rollout: while a kernel-argument rollout is in flight (a node
// unavailable), a new image (another version) is applied with `kubectl apply -k` of the install
// overlay (`mco dev upgrade`). The controller's, server's and every agent's pod are replaced by
// pods of the new image; the rollout completes, never more than maxUnavailable (1) node is
// unavailable at once (an independent watcher), and every node ends Done on the pool's config
// with the argument on its running kernel's command line, booted exactly once: none is left
// half-applied. The first worker to update is held in the middle of its transaction until its
// agent's pod is replaced (SIGTERM), so one transaction is certainly cut by the upgrade.
func TestMCOUpgradesItselfMidRollout(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: needs the dev cluster, real machines and the real binaries")
	}
	clustertest.RequireFailpoints(t) // holdMidTransaction arms them
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	archive := awaitUpgradeImage(t, ctx)
	cl := clustertest.Start(t, ctx, 2)
	c := cl.C

	// The controller's pod leads when dev up returns; its readiness follows up to a probe period
	// later.
	var old map[types.UID]string
	if err := clustertest.WaitFor(ctx, time.Minute, func() bool {
		old = mcoPods(t, ctx, c)
		return len(old) == 5 // controller, server, an agent on master-0 and on each of the 2 workers
	}); err != nil {
		t.Fatalf("%v waiting for mco's 5 pods to be ready before the upgrade; ready: %v", err, old)
	}
	workers := []string{"worker-0", "worker-1"}
	boots := map[string]int{}
	for _, name := range workers {
		boots[name] = cl.Boots(t, name)
		holdMidTransaction(t, ctx, cl, name)
	}
	previous := cl.Pool(t, ctx).Spec.Configuration.Name
	cl.Watcher.Reset()
	karg := &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "80-worker-upgrade-karg", Labels: map[string]string{protocol.RoleLabel: protocol.WorkerPool}},
		Spec:       mcfgv1.MachineConfigSpec{KernelArguments: []string{"mco.upgrade=1"}},
	}
	if err := c.Create(ctx, karg); err != nil {
		t.Fatal(err)
	}
	// The first worker to update holds in the middle of its transaction (the journal written,
	// the commit not yet), until its agent's pod is replaced.
	var held string
	clustertest.Eventually(t, 3*time.Minute, "a worker's agent holding mid-transaction", func() bool {
		for _, name := range workers {
			if cl.NodeFile(ctx, name, failpoint.PausedFile) != "" {
				held = name
				return true
			}
		}
		return false
	})
	inFlight := cl.Watcher.Unavailable()
	out, err := clustertest.Run(ctx, testenv.RequireMCO(t), "dev", "upgrade", "--dir", cl.Dir, archive)
	if err != nil {
		t.Fatalf("mco dev upgrade: %v\n%s", err, out)
	}
	t.Logf("upgraded while %v was unavailable: %s", inFlight, out)

	clustertest.Eventually(t, 5*time.Minute, "every mco pod replaced by a ready pod of the new image", func() bool {
		pods := mcoPods(t, ctx, c)
		if len(pods) != len(old) {
			return false
		}
		for uid, p := range pods {
			if _, stayed := old[uid]; stayed || !strings.HasSuffix(p, ":"+upgradeVersion) {
				return false
			}
		}
		return true
	})
	final := cl.WaitUpdatedWith(t, ctx, previous, 2, karg.Name)
	if most, worst := cl.Watcher.MaxUnavailable(); most > 1 {
		t.Errorf("%d nodes unavailable at once (%v), maxUnavailable is 1", most, worst)
	}
	if fired := cl.NodeFile(ctx, held, failpoint.FiredFile); !strings.Contains(fired, "released TERM") {
		t.Errorf("%s's agent was not stopped in the middle of its transaction by its pod's replacement: %s = %q", held, failpoint.FiredFile, fired)
	}
	for _, name := range workers {
		if got := cl.Boots(t, name) - boots[name]; got != 1 {
			t.Errorf("%s booted %d times for the kernel argument, want exactly once", name, got)
		}
		n := cl.Node(t, ctx, name)
		if n.Annotations[protocol.CurrentConfigAnnotation] != final || n.Annotations[protocol.StateAnnotation] != string(protocol.NodeDone) {
			t.Errorf("node %s: current %q state %q, want Done on %s", name, n.Annotations[protocol.CurrentConfigAnnotation], n.Annotations[protocol.StateAnnotation], final)
		}
		if cmdline := cl.InMachine(t, ctx, name, "cat", "/proc/cmdline"); !strings.Contains(cmdline, "mco.upgrade=1") {
			t.Errorf("node %s runs without the argument: %s", name, cmdline)
		}
	}
	for _, p := range mcoPods(t, ctx, c) {
		t.Log("after the upgrade: " + p)
	}
}

// mcoPods are config/default's pods that are not being deleted, by UID: "<name> on <node>
// <image>".
func mcoPods(t *testing.T, ctx context.Context, c client.Client) map[types.UID]string {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(devcluster.ServerNamespace), client.MatchingLabels{"app.kubernetes.io/name": "mco"}); err != nil {
		return nil
	}
	out := map[types.UID]string{}
	for i := range pods.Items {
		if p := &pods.Items[i]; p.DeletionTimestamp == nil && podutils.IsPodReady(p) {
			out[p.UID] = p.Name + " on " + p.Spec.NodeName + " " + p.Spec.Containers[0].Image
		}
	}
	return out
}

// upgradeImage is the image TestMCOUpgradesItselfMidRollout upgrades to, built in the
// background from TestMain while the tests before it run (inside the test, the build held the
// cluster's slot for half a minute).
var upgradeImage = struct {
	done    chan struct{}
	archive string
	err     error
}{done: make(chan struct{})}

// startUpgradeImage builds the upgrade's image in dir in the background, when the tests chosen
// (-run) include the upgrade test; awaitUpgradeImage returns it.
func startUpgradeImage(dir, run string) {
	if run != "" {
		top, _, _ := strings.Cut(run, "/")
		if ok, err := regexp.MatchString(top, "TestMCOUpgradesItselfMidRollout"); err == nil && !ok {
			upgradeImage.err = fmt.Errorf("-run %q leaves the upgrade test out", run)
			close(upgradeImage.done)
			return
		}
	}
	go func() {
		defer close(upgradeImage.done)
		upgradeImage.archive, upgradeImage.err = buildUpgradeImage(context.Background(), dir)
	}()
}

func awaitUpgradeImage(t *testing.T, ctx context.Context) string {
	t.Helper()
	select {
	case <-upgradeImage.done:
	case <-ctx.Done():
		t.Fatalf("waiting for the upgrade's image: %v", ctx.Err())
	}
	if upgradeImage.err != nil {
		t.Fatalf("the upgrade's image: %v", upgradeImage.err)
	}
	return upgradeImage.archive
}

// buildUpgradeImage builds mco (tag nodev, as the image's), mco-node and mco-server stamped
// upgradeVersion and an image of them in dir (make image's builder, its Debian packages from
// make image's cache), returning the archive.
func buildUpgradeImage(ctx context.Context, dir string) (string, error) {
	root := testenv.RepoRoot()
	ldflags := "-X github.com/mco-dev/mco/internal/version.Version=" + upgradeVersion
	for _, b := range [][]string{
		{"build", "-trimpath", "-tags", "nodev", "-ldflags", ldflags, "-o", filepath.Join(dir, "mco"), "./cmd/mco"},
		{"build", "-trimpath", "-tags", "nodeagent", "-ldflags", ldflags, "-o", filepath.Join(dir, "mco-node"), "./cmd/mco"},
		{"build", "-trimpath", "-tags", "mcoserver", "-ldflags", ldflags, "-o", filepath.Join(dir, "mco-server"), "./cmd/mco"},
		{"run", "./hack/image", "-bin", dir, "-version", upgradeVersion, "-out", filepath.Join(dir, "mco-image.tar")},
	} {
		cmd := exec.CommandContext(ctx, "go", b...)
		cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go %s: %v\n%s", strings.Join(b, " "), err, out)
		}
	}
	return filepath.Join(dir, "mco-image.tar"), nil
}

// holdMidTransaction arms the agent of node to hold at the second step of its next transaction
// until SIGTERM (failpoint.HoldAtEnv, through failpoint.ArmFile), kills it for the kubelet to
// start it again armed, and waits until the new agent took the arming.
func holdMidTransaction(t *testing.T, ctx context.Context, cl *clustertest.Cluster, node string) {
	t.Helper()
	script := `rm -f ` + failpoint.FiredFile + ` ` + failpoint.PausedFile + ` && printf '%s=2\n' "$1" > ` + failpoint.ArmFile + ` && pkill -KILL -f "$2"`
	if out, err := cl.Output(ctx, node, "sh", "-c", script, "sh", failpoint.HoldAtEnv, devcluster.AgentProcess); err != nil {
		t.Fatalf("arming %s's agent: %v: %s", node, err, out)
	}
	clustertest.Eventually(t, time.Minute, node+"'s restarted agent taking the arming", func() bool {
		_, err := cl.Output(ctx, node, "test", "!", "-e", failpoint.ArmFile)
		return err == nil
	})
}
