package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/bootguard"
	"github.com/mco-dev/mco/internal/daemon/hostlayout"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/reboot"
	"github.com/mco-dev/mco/internal/daemon/runningkubelet"
	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// BootGuardOptions configure BootGuard; zero values are the real host.
type BootGuardOptions struct {
	Root     string
	OS       osimage.Backend
	Systemd  systemd.Manager
	Rebooter reboot.Rebooter
	Log      *slog.Logger
	// Poll is the period of the checks (default 5 s).
	Poll time.Duration
	// BootedAt is when this boot began (default: the machine's PID 1 start, see machineBootedAt).
	BootedAt time.Time
	// Observe checks the kubelet and the Node (default: the running kubelet's healthz, and
	// the Node read with the kubelet's own kubeconfig).
	Observe func(ctx context.Context, node string, bootedAt time.Time) (kubelet, ready bootguard.Check)
	Now     func() time.Time
}

func (o *BootGuardOptions) defaults(root *noderoot.Root) error {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Poll == 0 {
		o.Poll = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Systemd == nil {
		o.Systemd = systemd.New(o.Root)
	}
	if o.OS == nil {
		o.OS = osimage.Detect(o.Root, func(p string) bool { ok, _ := root.Exists(p); return ok }, systemd.ExecRunner)
	}
	if o.Rebooter == nil {
		o.Rebooter = reboot.Systemd{Root: o.Root, Run: systemd.ExecRunner}
	}
	if o.Observe == nil {
		o.Observe = observeKubelet("/proc")
	}
	if o.BootedAt.IsZero() {
		at, err := machineBootedAt("/proc")
		if err != nil {
			return fmt.Errorf("when did this boot begin: %w", err)
		}
		o.BootedAt = at
	}
	return nil
}

// BootGuard is mco-boot-guard.service: on the boot after the agent armed it, it waits until
// the kubelet is healthy and the Node Ready, or until the record's timeout (counted from the
// boot) ends; healthy, it disarms; not, it reverts the update's transaction to the previous
// config, records the failure for the agent, disarms and reboots, once per target.
func BootGuard(ctx context.Context, opts BootGuardOptions) (bootguard.Decision, error) {
	root, err := noderoot.Open(cmpOr(opts.Root, "/"))
	if err != nil {
		return bootguard.Decision{}, err
	}
	defer root.Close()
	if err := opts.defaults(root); err != nil {
		return bootguard.Decision{}, err
	}
	for {
		facts, err := guardFacts(root)
		if err != nil {
			return bootguard.Decision{}, err
		}
		if facts.Record != nil && facts.Committed == facts.Record.To && facts.RebootPending != facts.Record.To && facts.FailedFor != facts.Record.To {
			facts.SinceBoot = opts.Now().Sub(opts.BootedAt)
			facts.Kubelet, facts.Node = opts.Observe(ctx, facts.Record.Node, opts.BootedAt)
		}
		d := bootguard.Decide(facts)
		switch d.Action {
		case bootguard.Nothing:
			opts.Log.Info("boot guard: nothing to do", "why", d.Why)
			return d, nil
		case bootguard.Disarm:
			opts.Log.Info("boot guard: disarming", "why", d.Why)
			return d, root.Remove(bootguard.RecordPath, false)
		case bootguard.Revert:
			d.Failure.At = opts.Now().UTC()
			opts.Log.Warn("boot guard: the node did not come back healthy; reverting", "check", d.Failure.Check, "evidence", d.Failure.Evidence)
			return d, revertBrokenBoot(ctx, root, opts, facts.Record, d.Failure)
		}
		select {
		case <-ctx.Done():
			return d, ctx.Err()
		case <-time.After(opts.Poll):
		}
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// guardFacts reads the records on the disk (not the kubelet: Observe does that).
func guardFacts(root *noderoot.Root) (bootguard.Facts, error) {
	var f bootguard.Facts
	data, err := root.ReadFile(bootguard.RecordPath)
	if noderoot.IsNotExist(err) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	if f.Record, err = bootguard.ParseRecord(data); err != nil {
		return f, err
	}
	if f.Committed, err = apply.CommittedName(root); err != nil {
		return f, err
	}
	pending, err := root.ReadFile(RebootPendingPath)
	if err != nil && !noderoot.IsNotExist(err) {
		return f, err
	}
	f.RebootPending = strings.TrimSpace(string(pending))
	failed, err := readBootFailure(root)
	if err != nil {
		return f, err
	}
	if failed != nil {
		f.FailedFor = failed.To
	}
	return f, nil
}

func readBootFailure(root *noderoot.Root) (*bootguard.Failure, error) {
	data, err := root.ReadFile(bootguard.FailedPath)
	if noderoot.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return bootguard.ParseFailure(data)
}

// revertBrokenBoot moves the root from the record's To back to its From as one transaction
// (files, units, the OS backend's kernel arguments, kernel type, extensions and image), records
// the failure, disarms and reboots. A revert that fails is rolled back, recorded and not
// rebooted for: the agent reports it if the node ever runs it again, and nothing retries it.
func revertBrokenBoot(ctx context.Context, root *noderoot.Root, opts BootGuardOptions, rec *bootguard.Record, failed *bootguard.Failure) error {
	revertErr := revertTo(ctx, root, opts, rec)
	if revertErr != nil {
		failed.RevertError = revertErr.Error()
	}
	data, err := json.Marshal(failed)
	if err != nil {
		return err
	}
	if err := root.WriteFile(bootguard.FailedPath, data, noderoot.WriteOptions{Perm: 0o644}); err != nil {
		return errors.Join(revertErr, err)
	}
	if err := root.Remove(bootguard.RecordPath, false); err != nil {
		return errors.Join(revertErr, err)
	}
	if revertErr != nil {
		return revertErr
	}
	opts.Log.Info("boot guard: reverted; rebooting into the previous config", "from", rec.To, "to", rec.From)
	return opts.Rebooter.Reboot(ctx, fmt.Sprintf("boot guard: %s did not come back healthy; reverted to %s", rec.To, rec.From))
}

// revertTo is the transaction To → From, as Revert runs one: the committed config's set and
// the previous one's, each with what the host derives from them.
func revertTo(ctx context.Context, root *noderoot.Root, opts BootGuardOptions, rec *bootguard.Record) error {
	a := &apply.Applier{Root: root, Systemd: opts.Systemd, OS: opts.OS}
	if _, err := a.Recover(ctx); err != nil {
		return err
	}
	data, err := apply.ReadCommitted(root)
	if err != nil {
		return err
	}
	if data == nil {
		return fmt.Errorf("%s is gone: nothing to revert", apply.CurrentConfigPath)
	}
	brokenMC, err := decodeMachineConfig(data)
	if err != nil {
		return err
	}
	prevMC, err := decodeMachineConfig(rec.Previous)
	if err != nil {
		return fmt.Errorf("the previous config in %s: %w", bootguard.RecordPath, err)
	}
	if brokenMC.Name != rec.To || prevMC.Name != rec.From {
		return fmt.Errorf("%s holds %s and the record %s, not %s and %s as armed", apply.CurrentConfigPath, brokenMC.Name, prevMC.Name, rec.To, rec.From)
	}
	index, err := readEtcdIndex(root)
	if err != nil {
		return err
	}
	broken, err := parseConfig(brokenMC, index)
	if err != nil {
		return err
	}
	prev, err := parseConfig(prevMC, index)
	if err != nil {
		return err
	}
	broken.set = hostlayout.WithDerived(broken.set, hostlayout.DerivedOnHost(broken.set, root.ReadFile))
	prev.set = hostlayout.WithDerived(prev.set, hostlayout.DerivedOnHost(prev.set, root.ReadFile))
	req := apply.Request{From: rec.To, To: rec.From, Old: broken.set, New: prev.set, Record: rec.Previous}
	if c := osimage.ChangeBetween(brokenMC.Spec, prevMC.Spec); !c.Empty() {
		if err := osimage.Refuse(opts.OS, c, prevMC.Spec); err != nil {
			return err
		}
		req.OS = &c
	}
	txn, err := a.Begin(ctx, req)
	if err != nil {
		return fmt.Errorf("preparing the revert to %s: %w", rec.From, err)
	}
	if err := txn.Apply(ctx); err != nil {
		return fmt.Errorf("reverting to %s: %w (rolled back: %v)", rec.From, err, txn.Rollback(ctx))
	}
	return txn.Commit(ctx)
}

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
