package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/daemon/bootguard"
	"github.com/mco-dev/mco/internal/daemon/reboot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestBootGuardArmRevertReport: before the reboot into a config, the agent arms the boot guard
// with its pool's node boot timeout (from the policy pacing the pool) and the previous config;
// the guard, run at the next boot with a kubelet that never comes back, reverts; the agent then
// reports NodeBootFailed on the previous config and does not try the target again until an
// admin asks (the retry annotation), after which the node updates, guarded again.
func TestBootGuardArmRevertReport(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const name, pool = "boot-guard", "boot-guard-pool"
	r0 := machineConfig("rendered-boot-guard-0", map[string]string{"/etc/boot-guard.conf": "zero"})
	r1 := machineConfig("rendered-boot-guard-1", map[string]string{"/etc/boot-guard.conf": "one",
		"/etc/systemd/system/kubelet.service.d/99-broken.conf": "[Service]\nExecStartPre=/bin/false\n"})
	// The render controller's reference from a rendered config to its pool.
	r1.OwnerReferences = []metav1.OwnerReference{{APIVersion: mcfgv1.GroupVersion.String(), Kind: "MachineConfigPool", Name: pool, UID: "pool-uid", Controller: ptr.To(true)}}
	createConfigs(t, ctx, r0, r1)
	policy := &rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: "boot-guard"},
		Spec: rolloutv1.MachineConfigPoolRolloutSpec{PoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"boot-guard": "yes"}},
			NodeBootTimeout: &metav1.Duration{Duration: 90 * time.Second}}}
	create(t, ctx, policy)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), policy) })
	// A pool of no node the policy selects: the node controller names it in the policy's status.
	nothing := &metav1.LabelSelector{MatchLabels: map[string]string{"boot-guard-selects": "nothing"}}
	mcp := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: pool, Labels: map[string]string{"boot-guard": "yes"}},
		Spec: mcfgv1.MachineConfigPoolSpec{MachineConfigSelector: nothing, NodeSelector: nothing}}
	create(t, ctx, mcp)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), mcp) })
	eventually(t, 30*time.Second, "mcprollout/boot-guard naming pool "+pool, func() (bool, string) {
		p := &rolloutv1.MachineConfigPoolRollout{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(policy), p); err != nil {
			return false, err.Error()
		}
		return len(p.Status.Pools) == 1 && p.Status.Pools[0].Name == pool, fmt.Sprintf("%+v", p.Status.Pools)
	})
	root := newRoot(t)
	provision(t, root, r0)
	createBareNode(t, ctx, name)

	var boots atomic.Int32
	var armed []bootguard.Record
	var guardReboots atomic.Int32
	ag := startAgentWith(t, name, root, nil, func() {
		data, err := os.ReadFile(filepath.Join(root, bootguard.RecordPath))
		if err != nil {
			t.Errorf("rebooting without an armed guard: %v", err)
			return
		}
		rec, err := bootguard.ParseRecord(data)
		if err != nil {
			t.Error(err)
			return
		}
		armed = append(armed, *rec)
		if boots.Add(1) > 1 {
			return // the retried boot: the guard finds the node healthy, nothing to revert
		}
		// The next boot: the kubelet never comes back, and the guard's timeout has passed.
		d, err := daemon.BootGuard(context.Background(), daemon.BootGuardOptions{Root: root, Systemd: systemd.New(root),
			Rebooter: reboot.Func(func(context.Context, string) error { guardReboots.Add(1); return nil }),
			BootedAt: time.Now().Add(-2 * time.Minute), Poll: time.Millisecond,
			Observe: func(context.Context, string, time.Time) (bootguard.Check, bootguard.Check) {
				return bootguard.Check{Evidence: "no kubelet process is running"}, bootguard.Check{}
			}})
		if err != nil || d.Action != bootguard.Revert {
			t.Errorf("boot guard: %v (%s), %v; want a revert", d.Action, d.Why, err)
		}
	})
	awaitNode(t, ctx, name, "Done in "+r0.Name, doneIn(r0.Name))
	annotate(t, ctx, name, map[string]string{protocol.DesiredConfigAnnotation: r1.Name})
	want := "NodeBootFailed: kubelet not healthy within 1m30s after the reboot into " + r1.Name + " (no kubelet process is running); reverted to " + r0.Name
	n := awaitNode(t, ctx, name, "Degraded with NodeBootFailed", degradedBy(want))
	if got := n.Annotations[protocol.ReasonAnnotation]; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	if got := n.Annotations[protocol.CurrentConfigAnnotation]; got != r0.Name {
		t.Errorf("currentConfig %s, want %s (what runs)", got, r0.Name)
	}
	mustContain(t, root, "/etc/boot-guard.conf", "zero")
	if _, err := os.Lstat(filepath.Join(root, "etc/systemd/system/kubelet.service.d/99-broken.conf")); !os.IsNotExist(err) {
		t.Errorf("the broken drop-in is still there: %v", err)
	}
	if len(armed) != 1 {
		t.Fatalf("armed %d times before the failure, want 1", len(armed))
	}
	rec := armed[0]
	var previous mcfgv1.MachineConfig
	if err := json.Unmarshal(rec.Previous, &previous); err != nil || previous.Name != r0.Name {
		t.Errorf("armed with previous %q (%v), want %s", previous.Name, err, r0.Name)
	}
	if rec.Node != name || rec.From != r0.Name || rec.To != r1.Name || rec.Timeout.Duration != 90*time.Second || rec.TimeoutFrom != "mcprollout/boot-guard" {
		t.Errorf("armed %+v", rec)
	}
	unit, _ := os.ReadFile(filepath.Join(root, bootguard.UnitPath))
	if string(unit) != bootguard.Unit {
		t.Errorf("unit on the host:\n%s", unit)
	}
	if target, err := os.Readlink(filepath.Join(root, bootguard.WantsPath)); err != nil || target != bootguard.UnitPath {
		t.Errorf("unit not enabled: %q, %v", target, err)
	}
	self, _ := os.ReadFile("/bin/true") // the harness's GuardBinary
	if installed, err := os.ReadFile(filepath.Join(root, bootguard.BinaryPath)); err != nil || string(installed) != string(self) {
		t.Errorf("guard binary not installed: %v", err)
	}
	if guardReboots.Load() != 1 {
		t.Errorf("the guard rebooted %d times, want 1", guardReboots.Load())
	}
	eventually(t, time.Minute, "a NodeBootFailed event", func() (bool, string) {
		evs := &corev1.EventList{}
		if err := env.Client.List(ctx, evs, client.InNamespace("default")); err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == name && e.Reason == "NodeBootFailed" && e.Type == corev1.EventTypeWarning && strings.HasPrefix(e.Message, "NodeBootFailed: ") {
				return true, ""
			}
		}
		return false, "none yet"
	})
	if got := ag.reboots.Load(); got != 1 {
		t.Errorf("%d reboots before the retry, want 1 (the target is not tried again)", got)
	}

	// An admin retries: the agent applies the target again, guarded again; this time it boots.
	annotate(t, ctx, name, map[string]string{rolloutv1.RetryAnnotation: time.Now().Add(time.Second).UTC().Format(time.RFC3339)})
	awaitNode(t, ctx, name, "Done in "+r1.Name+" after the retry", doneIn(r1.Name))
	if len(armed) != 2 || armed[1].To != r1.Name {
		t.Errorf("the retry was armed %d times, want once more for %s", len(armed)-1, r1.Name)
	}
	if _, err := os.Lstat(filepath.Join(root, bootguard.FailedPath)); !os.IsNotExist(err) {
		t.Errorf("the boot failure record outlived the retry: %v", err)
	}
}
