package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/diagnose"
	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
)

// diagnoseToken is the contents of a file at a secret-looking path: the bundle must hold only
// its sha256.
const diagnoseToken = "diagnose-e2e-bearer-0123456789"

// diagnoseBundle runs the built `mco diagnose` against a dev cluster whose real machines
// rolled out a MachineConfig with a token file, and reads the bundle back: the objects, the
// token only as its hash (in the MachineConfig and the rendered config alike), the
// controller's log, the machine's agent journal, events, and a summary naming the node.
func diagnoseBundle(t *testing.T, ctx context.Context, cl *clustertest.Cluster, workers []string) {
	ctx, cancel := context.WithTimeout(ctx, 8*time.Minute)
	defer cancel()
	mco := testenv.RequireMCO(t)
	previous := cl.Pool(t, ctx).Spec.Configuration.Name
	const mcName, tokenPath = "50-worker-diagnose-token", "/etc/mco-diagnose/api-token"
	if err := cl.C.Create(ctx, clustertest.FileConfig(mcName, tokenPath, diagnoseToken)); err != nil {
		t.Fatal(err)
	}
	target := cl.WaitUpdatedWith(t, ctx, previous, int32(len(workers)), mcName)
	if got := cl.NodeFile(ctx, "worker-0", tokenPath); got != diagnoseToken {
		t.Fatalf("%s on worker-0 = %q: the rollout did not write it", tokenPath, got)
	}

	bundle := filepath.Join(t.TempDir(), "bundle.tar.gz")
	began := time.Now()
	// No --dev-dir: the kubeconfig beside the cluster's state.json says it is a dev cluster.
	out, err := clustertest.Run(ctx, mco, "diagnose", "--kubeconfig", filepath.Join(cl.Dir, "kubeconfig"), "--output", bundle, "--since", "30m")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mco diagnose took %s: %s", time.Since(began).Round(time.Millisecond), out)
	files := readBundle(t, bundle, "bundle")
	t.Logf("bundle holds %d files", len(files))

	for _, name := range []string{
		"cluster/machineconfigpools/worker.yaml", "cluster/machineconfigpools/master.yaml", "cluster/nodes/worker-0.yaml",
		"cluster/machineconfignodes/worker-0.yaml", "cluster/machineconfigs/" + mcName + ".yaml", "cluster/machineconfigs/" + target + ".yaml",
		"cluster/machineconfigurations/cluster.yaml", "cluster/events.yaml", "logs/kube-apiserver.log", "logs/bootstrap-server.log", "nodes/worker-0/machine.yaml", "nodes/master-0/machine.yaml",
		"explain/mcp-worker.txt", "explain/mcp-master.txt",
	} {
		if _, ok := files[name]; !ok {
			t.Errorf("bundle lacks %s", name)
		}
	}
	for name, body := range files {
		if strings.Contains(body, diagnoseToken) {
			t.Errorf("%s holds the token in clear", name)
		}
	}
	hash := sha256Hex(diagnoseToken)
	for _, mc := range []string{mcName, target} {
		if !strings.Contains(files["cluster/machineconfigs/"+mc+".yaml"], hash) {
			t.Errorf("machineconfig %s does not name the token's sha256 %s:\n%s", mc, hash, files["cluster/machineconfigs/"+mc+".yaml"])
		}
	}
	if !strings.Contains(files["redactions.txt"], "machineconfig "+mcName+": file "+tokenPath+": sha256 "+hash) {
		t.Errorf("redactions.txt:\n%s", files["redactions.txt"])
	}
	// The controller runs as config/default's pod: its log is logs/controller/<pod>.log.
	controllerLog := ""
	for name, body := range files {
		if strings.HasPrefix(name, "logs/controller/") && !strings.HasSuffix(name, "-previous.log") {
			controllerLog += body
		}
	}
	if !strings.Contains(controllerLog, `"controller":"machineconfignode"`) {
		t.Errorf("logs/controller/*.log (%d bytes) is not the controller pod's log: it never names its machineconfignode controller", len(controllerLog))
	}
	if journal := files["nodes/worker-0/agent.log"]; !strings.Contains(journal, "planned the update") || !strings.Contains(journal, target) {
		t.Errorf("nodes/worker-0/agent.log is not the agent's journal:\n%s", journal)
	}
	if !strings.Contains(files["cluster/events.txt"], "node/worker-0") {
		t.Errorf("cluster/events.txt has no event about node worker-0:\n%s", files["cluster/events.txt"])
	}
	summary := files["summary.txt"]
	t.Logf("summary.txt:\n%s", summary)
	for _, want := range []string{"dev cluster in " + cl.Dir, "Kubernetes: v", "worker-0", target, "  mcp/worker: ", "Every part was collected."} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary.txt lacks %q:\n%s", want, summary)
		}
	}
	if files["errors.txt"] != "none: every part was collected\n" {
		t.Errorf("errors.txt:\n%s", files["errors.txt"])
	}
	t.Run("mco status in a pod of its own image", func(t *testing.T) { statusInPod(t, ctx, cl, workers) })
}

// readBundle reads a tar.gz written by mco diagnose: every file under dir/, by its path below.
func readBundle(t *testing.T, path, dir string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files, err := diagnose.ReadBundle(f, dir)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
