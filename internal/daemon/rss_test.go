package daemon_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestDaemonRSSAtRest builds the node build of mco (bin/mco-node, what nodes run), runs
// `mco daemon` for a node that is Done with 1,000 managed files, and reads the process's
// resident memory once it is idle. Target: < 40 MiB resident, the binary's touched pages
// included.
// Building the binary takes a minute on a busy machine, so it runs only when asked:
// MCO_BENCH_RSS=1 (bench/daemon-rss.sh).
func TestDaemonRSSAtRest(t *testing.T) {
	if os.Getenv("MCO_BENCH_RSS") == "" {
		t.Skip("set MCO_BENCH_RSS=1 to measure the agent's memory (builds the node build of mco)")
	}
	requireSystemctl(t)
	ctx := context.Background()
	bin := filepath.Join(t.TempDir(), "mco-node")
	build := exec.Command("go", "build", "-trimpath", "-tags", "nodeagent", "-o", bin, filepath.Join(testenv.RepoRoot(), "cmd", "mco"))
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building mco: %v\n%s", err, out)
	}
	files := map[string]string{}
	for i := range 1000 {
		files["/etc/rss/f"+strconv.Itoa(i)] = strings.Repeat("x", 200)
	}
	mc := machineConfig("rendered-rss-test", files)
	mc.Labels = nil
	create(t, ctx, mc)
	if err := env.Client.Get(ctx, client.ObjectKey{Name: mc.Name}, &mcfgv1.MachineConfig{}); err != nil {
		t.Fatal(err)
	}
	root := newRoot(t)
	provision(t, root, mc)
	createNode(t, ctx, "rss-node")
	cmd := exec.Command(bin, "daemon", "--node", "rss-node", "--root", root, "--kubeconfig", env.KubeconfigPath, "--metrics-bind-address", "0")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	eventually(t, 60*time.Second, "rss-node Done", func() (bool, string) {
		n := node(t, ctx, "rss-node")
		return n.Annotations[protocol.StateAnnotation] == string(protocol.NodeDone), nodeSummary(n)
	})
	time.Sleep(5 * time.Second) // at rest: informer synced, drift monitor idle
	status := procStatus(t, cmd.Process.Pid)
	rss := status["VmRSS"]
	t.Logf("mco daemon RSS at rest with 1,000 managed files: %.1f MiB (anonymous %.1f MiB, file-backed %.1f MiB: the binary's pages)",
		float64(rss)/1024, float64(status["RssAnon"])/1024, float64(status["RssFile"])/1024)
	if rss > 40*1024 {
		t.Errorf("resident memory %.1f MiB exceeds the 40 MiB target", float64(rss)/1024)
	}
}

// procStatus reads the kB fields of /proc/<pid>/status.
func procStatus(t *testing.T, pid int) map[string]int {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.HasSuffix(v, " kB") {
			out[k], _ = strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(v, " kB")))
		}
	}
	if out["VmRSS"] == 0 {
		t.Fatal("no VmRSS")
	}
	return out
}
