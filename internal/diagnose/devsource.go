package diagnose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/dev/machine"
)

// MaxLogBytes bounds each log file in the bundle: its last MaxLogBytes are kept.
const MaxLogBytes = 4 << 20

// DevCluster reads the logs of the dev cluster in Dir (`mco dev up --dir`): those of mco's
// pods (Pods: the controller's and server's), the log files of its host processes (DIR/logs:
// kube-apiserver, etcd, the bootstrap controller and server, machine supervisors) and, from
// inside each running machine, the journal of the agent and the units it depends on.
type DevCluster struct {
	Dir  string
	Pods Pods
}

func (d DevCluster) String() string { return "dev cluster in " + d.Dir }

// ComponentLogs adds the pods' logs as Pods does, and every DIR/logs/*.log as logs/<name>.log,
// its last MaxLogBytes (plain files have no reliable timestamps to cut at since).
func (d DevCluster) ComponentLogs(ctx context.Context, b *Bundle, since time.Duration) {
	if d.Pods.Client != nil {
		d.Pods.ComponentLogs(ctx, b, since)
	}
	paths, _ := filepath.Glob(filepath.Join(d.Dir, "logs", "*.log"))
	if len(paths) == 0 {
		b.Fail("logs", fmt.Errorf("no log files in %s", filepath.Join(d.Dir, "logs")))
		return
	}
	for _, p := range paths {
		data, err := tail(p, MaxLogBytes)
		if err != nil {
			b.Fail("logs/"+filepath.Base(p), err)
			continue
		}
		b.Add("logs/"+filepath.Base(p), data)
	}
}

// AgentLogs adds, for each node and each dev machine (a machine that never registered its Node
// is the one most worth a look), the journal of the agent, first-boot and kubelet stand-in
// units since since, the machine's state and the tail of its console (the boot stages before
// systemd).
func (d DevCluster) AgentLogs(ctx context.Context, b *Bundle, nodes []string, since time.Duration) {
	names := slices.Clone(nodes)
	if st, err := devcluster.LoadState(d.Dir); err != nil {
		b.Fail("dev machines", err)
	} else {
		for _, m := range st.Machines {
			if !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
	}
	slices.Sort(names)
	cutoff := time.Now().Add(-since).Unix()
	for _, name := range names {
		dir := devcluster.MachineDir(d.Dir, name)
		if _, err := os.Stat(dir); err != nil {
			b.Fail("nodes/"+name, fmt.Errorf("no dev machine %s: %w", name, err))
			continue
		}
		if st, err := machine.ReadStatus(dir); err != nil {
			b.Fail("nodes/"+name+"/machine.yaml", err)
		} else {
			b.AddYAML("nodes/"+name+"/machine.yaml", st)
		}
		if data, err := tail(filepath.Join(dir, machine.ConsoleFile), MaxLogBytes); err == nil {
			b.Add("nodes/"+name+"/console.log", data)
		} else if !errors.Is(err, os.ErrNotExist) {
			b.Fail("nodes/"+name+"/console.log", err)
		}
		journalCtx, cancel := context.WithTimeout(ctx, time.Minute)
		// The first-boot service and the kubelet are units; the agent is a pod, whose logs the
		// kubelet keeps on the machine.
		out, err := machine.Output(journalCtx, dir, "sh", "-c", fmt.Sprintf(
			"journalctl --no-pager -o short-iso-precise --since @%d -u %s -u %s; echo '--- agent pod (mco-daemon)'; %s",
			cutoff, devcluster.FirstBootUnit, devcluster.KubeletUnit, devcluster.AgentLogsScript(2000)))
		cancel()
		if err != nil {
			b.Fail("nodes/"+name+"/agent.log (journal of machine "+name+")", err)
			continue
		}
		b.Add("nodes/"+name+"/agent.log", capBytes([]byte(out), MaxLogBytes))
	}
}

// tail reads the last limit bytes of the file at path, saying so when it cut.
func tail(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var head string
	if info.Size() > limit {
		if _, err := f.Seek(info.Size()-limit, io.SeekStart); err != nil {
			return nil, err
		}
		head = fmt.Sprintf("[mco diagnose: the first %d bytes are left out]\n", info.Size()-limit)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return append([]byte(head), data...), nil
}

func capBytes(data []byte, limit int) []byte {
	if len(data) <= limit {
		return data
	}
	return append([]byte(fmt.Sprintf("[mco diagnose: the first %d bytes are left out]\n", len(data)-limit)), data[len(data)-limit:]...)
}

// DevDirFor is the dev cluster whose kubeconfig is at kubeconfig (DIR/kubeconfig beside
// DIR/state.json, as `mco dev up` writes them), or "" when kubeconfig is not one.
func DevDirFor(kubeconfig string) string {
	if kubeconfig == "" || strings.Contains(kubeconfig, string(os.PathListSeparator)) {
		return ""
	}
	dir := filepath.Dir(kubeconfig)
	if _, err := devcluster.LoadState(dir); err != nil {
		return ""
	}
	return dir
}
