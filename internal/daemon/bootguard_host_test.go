package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/vincent-petithory/dataurl"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/bootguard"
	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/reboot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
)

const brokenDropIn = "/etc/systemd/system/kubelet.service.d/99-broken.conf"

func guardConfig(t *testing.T, name string, files map[string]string, kargs ...string) *mcfgv1.MachineConfig {
	t.Helper()
	type file struct {
		Path     string            `json:"path"`
		Mode     int               `json:"mode"`
		Contents map[string]string `json:"contents"`
	}
	var fs []file
	for p, data := range files {
		fs = append(fs, file{Path: p, Mode: 0o644, Contents: map[string]string{"source": "data:," + dataurl.EscapeString(data)}})
	}
	raw, err := json.Marshal(map[string]any{"ignition": map[string]string{"version": "3.5.0"}, "storage": map[string]any{"files": fs}})
	if err != nil {
		t.Fatal(err)
	}
	return &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: raw}, KernelArguments: kargs}}
}

// commitUpdate moves root from `from` to `to` as the agent does: one transaction, staging the
// OS change with b.
func commitUpdate(t *testing.T, ctx context.Context, r *noderoot.Root, b osimage.Backend, from, to *mcfgv1.MachineConfig) {
	t.Helper()
	var oldSet nodefiles.Set
	var fromName string
	var oldSpec mcfgv1.MachineConfigSpec
	if from != nil {
		l, err := parseConfig(from, nil)
		if err != nil {
			t.Fatal(err)
		}
		oldSet, fromName, oldSpec = l.set, from.Name, from.Spec
	}
	l, err := parseConfig(to, nil)
	if err != nil {
		t.Fatal(err)
	}
	record, _ := json.Marshal(to)
	req := apply.Request{From: fromName, To: to.Name, Old: oldSet, New: l.set, Record: record}
	if c := osimage.ChangeBetween(oldSpec, to.Spec); !c.Empty() {
		req.OS = &c
	}
	a := &apply.Applier{Root: r, Systemd: systemd.New(r.Path()), OS: b}
	txn, err := a.Begin(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestBootGuard runs the guard on a real node root whose update to a config with a kubelet
// drop-in and a kernel argument committed and rebooted: the kubelet never comes back, so the
// guard reverts the files, the drop-in and the kernel argument, records the failure and
// reboots, once; a healthy node only disarms.
func TestBootGuard(t *testing.T) {
	prev := guardConfig(t, "rendered-worker-a", map[string]string{"/etc/mco-test.conf": "a"}, "audit=1")
	broken := guardConfig(t, "rendered-worker-b", map[string]string{"/etc/mco-test.conf": "b", brokenDropIn: "[Service]\nExecStartPre=/bin/false\n"}, "audit=1", "quiet")
	down := bootguard.Check{Evidence: "no kubelet process is running"}
	for _, tc := range []struct {
		name                         string
		kubelet, node                bootguard.Check
		sinceBoot                    time.Duration
		rebootPending, failedAlready bool
		want                         bootguard.Action
	}{
		{name: "kubelet never healthy: revert and reboot", kubelet: down, sinceBoot: 2 * time.Minute, want: bootguard.Revert},
		{name: "healthy: disarm", kubelet: bootguard.Check{OK: true}, node: bootguard.Check{OK: true}, sinceBoot: 30 * time.Second, want: bootguard.Disarm},
		{name: "a second failure of the target: disarm, no revert", kubelet: down, sinceBoot: 2 * time.Minute, failedAlready: true, want: bootguard.Disarm},
		{name: "the armed boot still runs: nothing", kubelet: down, sinceBoot: 2 * time.Minute, rebootPending: true, want: bootguard.Nothing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir, r := guardRoot(t, "run/machine-config-daemon")
			b := &bootBackend{supports: map[string]bool{osimage.FieldKernelArguments: true}}
			commitUpdate(t, ctx, r, b, nil, prev)
			b.reboot()
			commitUpdate(t, ctx, r, b, prev, broken)
			b.reboot()
			previous, _ := json.Marshal(prev)
			rec, _ := json.Marshal(bootguard.Record{Node: "w1", From: prev.Name, To: broken.Name, Timeout: bootguard.Duration{Duration: time.Minute},
				TimeoutFrom: "mcprollout/workers", ArmedAt: time.Now(), Previous: previous})
			write := func(p, data string) {
				if err := os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(bootguard.RecordPath, string(rec))
			if tc.rebootPending {
				write(RebootPendingPath, broken.Name+"\n")
			}
			earlier := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			if tc.failedAlready {
				old, _ := json.Marshal(bootguard.Failure{From: prev.Name, To: broken.Name, Check: "kubelet not healthy", At: earlier})
				write(bootguard.FailedPath, string(old))
			}
			stagedBefore := len(b.staged)
			var reboots []string
			now := time.Now()
			d, err := BootGuard(ctx, BootGuardOptions{Root: dir, OS: b, Systemd: systemd.New(dir),
				Rebooter: reboot.Func(func(_ context.Context, why string) error { reboots = append(reboots, why); return nil }),
				BootedAt: now.Add(-tc.sinceBoot), Now: func() time.Time { return now }, Poll: time.Millisecond,
				Observe: func(context.Context, string, time.Time) (bootguard.Check, bootguard.Check) {
					return tc.kubelet, tc.node
				}})
			if err != nil {
				t.Fatal(err)
			}
			if d.Action != tc.want {
				t.Fatalf("action %v (%s), want %v", d.Action, d.Why, tc.want)
			}
			committed, err := apply.CommittedName(r)
			if err != nil {
				t.Fatal(err)
			}
			conf, _ := os.ReadFile(filepath.Join(dir, "etc/mco-test.conf"))
			_, dropInErr := os.Lstat(filepath.Join(dir, brokenDropIn))
			_, recErr := os.Lstat(filepath.Join(dir, bootguard.RecordPath))
			failedData, _ := os.ReadFile(filepath.Join(dir, bootguard.FailedPath))
			if tc.want != bootguard.Revert {
				if committed != broken.Name || string(conf) != "b" || dropInErr != nil || len(reboots) != 0 || len(b.staged) != stagedBefore {
					t.Errorf("%v changed the node: committed %s, conf %q, drop-in %v, reboots %q, staged %d→%d",
						tc.want, committed, conf, dropInErr, reboots, stagedBefore, len(b.staged))
				}
				if wantRecord := tc.want == bootguard.Nothing; (recErr == nil) != wantRecord {
					t.Errorf("record left: %v, want %v", recErr == nil, wantRecord)
				}
				if tc.failedAlready {
					if f, err := bootguard.ParseFailure(failedData); err != nil || !f.At.Equal(earlier) {
						t.Errorf("the earlier failure was rewritten: %s", failedData)
					}
				}
				return
			}
			if committed != prev.Name || string(conf) != "a" || !errors.Is(dropInErr, os.ErrNotExist) {
				t.Errorf("not reverted: committed %s, conf %q, drop-in %v", committed, conf, dropInErr)
			}
			if !errors.Is(recErr, os.ErrNotExist) {
				t.Errorf("record not removed: %v", recErr)
			}
			if len(b.staged) != stagedBefore+1 || strings.Join(b.staged[len(b.staged)-1].OldKernelArgs, " ") != "audit=1 quiet" ||
				strings.Join(b.staged[len(b.staged)-1].NewKernelArgs, " ") != "audit=1" {
				t.Errorf("kernel arguments not reverted through the backend: staged %+v", b.staged[stagedBefore:])
			}
			f, err := bootguard.ParseFailure(failedData)
			if err != nil {
				t.Fatal(err)
			}
			if f.From != prev.Name || f.To != broken.Name || f.Check != "kubelet not healthy within 1m0s after the reboot into rendered-worker-b" ||
				f.Evidence != down.Evidence || f.RevertError != "" || !f.At.Equal(now.UTC()) {
				t.Errorf("failure recorded %+v", f)
			}
			if len(reboots) != 1 || !strings.Contains(reboots[0], "reverted to rendered-worker-a") {
				t.Errorf("reboots %q, want one into the previous config", reboots)
			}
		})
	}
}

func TestProcessStartTicks(t *testing.T) {
	stat := "1 (sys temd) (x) S 0 1 1 0 -1 4194560 9813 1553393 110 1199 60 47 3437 1436 20 0 1 0 4242 22360064 3219 18446744073709551615"
	got, err := processStartTicks([]byte(stat))
	if err != nil || got != 4242 {
		t.Errorf("processStartTicks = %d, %v; want 4242", got, err)
	}
	if _, err := processStartTicks([]byte("1 (init) S 0 1")); err == nil {
		t.Error("a short stat line parsed")
	}
}

func TestReadyInThisBoot(t *testing.T) {
	booted := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	node := func(status corev1.ConditionStatus, heartbeat time.Time) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, LastHeartbeatTime: metav1.NewTime(heartbeat)},
			{Type: corev1.NodeReady, Status: status, Message: "kubelet is posting ready status", LastHeartbeatTime: metav1.NewTime(heartbeat)}}}}
	}
	for _, tc := range []struct {
		name string
		node *corev1.Node
		ok   bool
		says string
	}{
		{"ready in this boot", node(corev1.ConditionTrue, booted.Add(time.Second)), true, ""},
		{"ready, but from the boot before", node(corev1.ConditionTrue, booted.Add(-time.Minute)), false, "not been reported since the reboot"},
		{"not ready", node(corev1.ConditionFalse, booted.Add(time.Minute)), false, "Ready=False"},
		{"no condition", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w1"}}, false, "no Ready condition"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := readyInThisBoot(tc.node, booted)
			if c.OK != tc.ok || !strings.Contains(c.Evidence, tc.says) {
				t.Errorf("readyInThisBoot = %+v, want ok %v saying %q", c, tc.ok, tc.says)
			}
		})
	}
}

// TestBootGuardRevertFails: a revert that cannot be made (here the record's previous config is
// not the one it names) changes nothing, is recorded for the agent, disarms and does not
// reboot: nothing retries it, and no revert loop starts.
func TestBootGuardRevertFails(t *testing.T) {
	ctx := context.Background()
	dir, r := guardRoot(t, "run")
	prev := guardConfig(t, "rendered-worker-a", map[string]string{"/etc/mco-test.conf": "a"})
	broken := guardConfig(t, "rendered-worker-b", map[string]string{"/etc/mco-test.conf": "b"})
	b := &bootBackend{}
	commitUpdate(t, ctx, r, b, nil, prev)
	commitUpdate(t, ctx, r, b, prev, broken)
	other, _ := json.Marshal(guardConfig(t, "rendered-worker-z", nil))
	rec, _ := json.Marshal(bootguard.Record{Node: "w1", From: prev.Name, To: broken.Name, Timeout: bootguard.Duration{Duration: time.Minute}, Previous: other})
	if err := os.WriteFile(filepath.Join(dir, bootguard.RecordPath), rec, 0o600); err != nil {
		t.Fatal(err)
	}
	rebooted := false
	d, err := BootGuard(ctx, BootGuardOptions{Root: dir, OS: b, Systemd: systemd.New(dir),
		Rebooter: reboot.Func(func(context.Context, string) error { rebooted = true; return nil }),
		BootedAt: time.Now().Add(-time.Hour), Poll: time.Millisecond,
		Observe: func(context.Context, string, time.Time) (bootguard.Check, bootguard.Check) {
			return bootguard.Check{Evidence: "healthz: connection refused"}, bootguard.Check{}
		}})
	if err == nil || d.Action != bootguard.Revert {
		t.Fatalf("BootGuard = %v, %v; want a failed revert", d.Action, err)
	}
	if rebooted {
		t.Error("rebooted after a failed revert")
	}
	if committed, _ := apply.CommittedName(r); committed != broken.Name {
		t.Errorf("committed %s after a failed revert, want %s untouched", committed, broken.Name)
	}
	mustHave := func(p, want string) {
		if got, _ := os.ReadFile(filepath.Join(dir, p)); string(got) != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	mustHave("etc/mco-test.conf", "b")
	if _, err := os.Lstat(filepath.Join(dir, bootguard.RecordPath)); !os.IsNotExist(err) {
		t.Errorf("still armed: %v", err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, bootguard.FailedPath))
	f, err := bootguard.ParseFailure(data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.RevertError, "rendered-worker-z") || !strings.Contains(f.Reason(), "the node is still in rendered-worker-b") {
		t.Errorf("failure recorded: %+v", f)
	}
}

// guardRoot is a node root for the boot guard: a temporary directory with
// /etc/machine-config-daemon and the given directories, opened (closed when the test ends).
func guardRoot(t *testing.T, dirs ...string) (string, *noderoot.Root) {
	t.Helper()
	dir := t.TempDir()
	for _, d := range append([]string{"etc/machine-config-daemon"}, dirs...) {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r, err := noderoot.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return dir, r
}
