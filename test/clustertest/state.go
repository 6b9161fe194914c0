package clustertest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/dev/machine"
	"github.com/mco-dev/mco/internal/testenv"
)

// LogState shows the worker pool's status and the nodes' annotations, for a failed wait.
func (cl *Cluster) LogState(t testing.TB, nodes []string) {
	ctx := context.Background()
	p := cl.Pool(t, ctx)
	js, _ := json.MarshalIndent(p.Status, "", "  ")
	t.Logf("worker pool: target %s, status %s", p.Spec.Configuration.Name, js)
	for _, n := range nodes {
		t.Logf("%s: annotations %v", n, cl.Node(t, ctx, n).Annotations)
	}
}

// RecordState writes into dir what a rollout that did not finish leaves to look at, before the
// cluster is torn down: pools, Nodes, MachineConfigNodes, MachineConfigs and events as YAML,
// the controller's and every agent's log, and in each machine its systemd jobs, failed units
// and the journal of the kubelet, containerd and the agent's units. What cannot be read is
// noted in its file instead.
func (cl *Cluster) RecordState(t testing.TB, dir string, machines []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("recording the cluster's state: %v", err)
		return
	}
	kubectl := testenv.RequireTool(t, "kubectl")
	write := func(name string, out []byte, err error) {
		if err != nil {
			out = append(out, []byte("\nerror: "+err.Error()+"\n")...)
		}
		if werr := os.WriteFile(filepath.Join(dir, name), out, 0o644); werr != nil {
			t.Errorf("recording %s: %v", name, werr)
		}
	}
	k := func(args ...string) ([]byte, error) {
		return Run(ctx, kubectl, append([]string{"--kubeconfig", filepath.Join(cl.Dir, "kubeconfig")}, args...)...)
	}
	for name, args := range map[string][]string{
		"pools.yaml":                 {"get", "mcp", "-o", "yaml"},
		"nodes.yaml":                 {"get", "nodes", "-o", "yaml"},
		"machineconfignodes.yaml":    {"get", "mcn", "-o", "yaml"},
		"machineconfigs.txt":         {"get", "mc", "-o", "wide"},
		"events.txt":                 {"get", "events", "-A", "--sort-by=.lastTimestamp"},
		"pods.txt":                   {"get", "pods", "-A", "-o", "wide"},
		"controller.log":             {"logs", "-n", "openshift-machine-config-operator", "deployment/mco-controller", "--tail=3000", "--timestamps"},
		"controller-previous.log":    {"logs", "-n", "openshift-machine-config-operator", "deployment/mco-controller", "--previous", "--tail=1000", "--timestamps"},
		"machineconfigurations.yaml": {"get", "machineconfigurations", "-o", "yaml"},
	} {
		out, err := k(args...)
		write(name, out, err)
	}
	for _, m := range machines {
		out, err := k("logs", "-n", "openshift-machine-config-operator", "-l", "app.kubernetes.io/component=daemon",
			"--field-selector", "spec.nodeName="+m, "--tail=2000", "--timestamps")
		write("agent-"+m+".log", out, err)
		text, err := machine.Output(ctx, cl.MachineDir(m), "sh", "-c",
			"echo '--- systemctl list-jobs'; systemctl list-jobs --no-pager; echo '--- systemctl --failed'; systemctl --failed --no-pager; "+
				"echo '--- journal'; journalctl --no-pager -n 400 -o short-precise")
		write("machine-"+m+".txt", []byte(text), err)
	}
	t.Logf("the cluster's state is recorded in %s", dir)
}
