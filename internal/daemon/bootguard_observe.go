package daemon

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mco-dev/mco/internal/daemon/bootguard"
	"github.com/mco-dev/mco/internal/daemon/runningkubelet"
)

// What the boot guard observes of this boot: the kubelet, its Node, and when the boot began.

// observeKubelet checks the running kubelet's healthz (where its configuration says it
// serves it) and its Node, read with the kubelet's own kubeconfig: Ready, and reported in this
// boot (a Node not yet updated since the reboot still shows the old boot's Ready).
func observeKubelet(procDir string) func(ctx context.Context, node string, bootedAt time.Time) (bootguard.Check, bootguard.Check) {
	client := &http.Client{Timeout: 5 * time.Second}
	return func(ctx context.Context, node string, bootedAt time.Time) (bootguard.Check, bootguard.Check) {
		k, found, err := runningkubelet.Find(procDir)
		switch {
		case err != nil:
			return bootguard.Check{Evidence: "reading the running kubelet: " + err.Error()}, bootguard.Check{}
		case !found:
			return bootguard.Check{Evidence: "no kubelet process is running"}, bootguard.Check{}
		}
		url, ok, err := healthzOf(k)
		if err != nil {
			return bootguard.Check{Evidence: err.Error()}, bootguard.Check{}
		}
		if ok {
			if err := checkKubelet(ctx, client, url); err != nil {
				return bootguard.Check{Evidence: "healthz: " + err.Error()}, bootguard.Check{}
			}
		}
		return bootguard.Check{OK: true}, nodeReady(ctx, runningkubelet.Flag(k.Args, "kubeconfig"), node, bootedAt)
	}
}

func nodeReady(ctx context.Context, kubeconfig, name string, bootedAt time.Time) bootguard.Check {
	if kubeconfig == "" {
		return bootguard.Check{Evidence: "the kubelet runs without --kubeconfig"}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return bootguard.Check{Evidence: fmt.Sprintf("the kubelet's kubeconfig %s: %v", kubeconfig, err)}
	}
	cfg.Timeout = 10 * time.Second
	cs, err := typedcorev1.NewForConfig(cfg)
	if err != nil {
		return bootguard.Check{Evidence: err.Error()}
	}
	node, err := cs.Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return bootguard.Check{Evidence: fmt.Sprintf("reading Node %s: %v", name, err)}
	}
	return readyInThisBoot(node, bootedAt)
}

// readyInThisBoot: the Node's Ready condition is True and the kubelet reported it after
// bootedAt (less a minute of clock difference between the node and the kubelet's heartbeat
// stamps, which are the node's own clock, so only a reboot's restart matters).
func readyInThisBoot(node *corev1.Node, bootedAt time.Time) bootguard.Check {
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		switch {
		case c.Status != corev1.ConditionTrue:
			return bootguard.Check{Evidence: fmt.Sprintf("Node %s Ready=%s: %s", node.Name, c.Status, c.Message)}
		case c.LastHeartbeatTime.Time.Before(bootedAt):
			return bootguard.Check{Evidence: fmt.Sprintf("Node %s has not been reported since the reboot (last heartbeat %s)", node.Name, c.LastHeartbeatTime.UTC().Format(time.RFC3339))}
		}
		return bootguard.Check{OK: true}
	}
	return bootguard.Check{Evidence: fmt.Sprintf("Node %s has no Ready condition", node.Name)}
}

// machineBootedAt is when this machine's PID 1 started: the kernel's boot time (btime) plus
// PID 1's start in clock ticks since then. On a host that is the boot; in a dev machine,
// which shares the host's kernel, it is the machine's own boot, where btime alone is the host's.
func machineBootedAt(procDir string) (time.Time, error) {
	stat, err := os.ReadFile(filepath.Join(procDir, "stat"))
	if err != nil {
		return time.Time{}, err
	}
	btime, err := parseBootTime(stat)
	if err != nil {
		return time.Time{}, err
	}
	pid1, err := os.ReadFile(filepath.Join(procDir, "1", "stat"))
	if err != nil {
		return time.Time{}, err
	}
	ticks, err := processStartTicks(pid1)
	if err != nil {
		return time.Time{}, err
	}
	// USER_HZ is 100 on every architecture Linux reports /proc/<pid>/stat times for.
	return time.Unix(int64(btime), 0).Add(time.Duration(ticks) * 10 * time.Millisecond), nil
}

// processStartTicks is field 22 (starttime) of /proc/<pid>/stat; the command (field 2) may
// hold spaces and parentheses, so fields are counted after its last ')'.
func processStartTicks(stat []byte) (int64, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/1/stat: no command field")
	}
	sc := bufio.NewScanner(bytes.NewReader(stat[i+1:]))
	sc.Split(bufio.ScanWords)
	for n := 3; sc.Scan(); n++ {
		if n == 22 {
			v, err := strconv.ParseInt(sc.Text(), 10, 64)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("/proc/1/stat: starttime %q", sc.Text())
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("/proc/1/stat: fewer than 22 fields")
}
