package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/daemon/failpoint"
	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/dev/machine"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
)

// TestRealMachines rolls changes of every kind onto real systemd machines: real units, real
// systemctl, real reboots with the kernel command line the machine staged, real power loss.
func TestRealMachines(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: needs the dev cluster, real machines and the real binaries")
	}
	clustertest.RequireFailpoints(t) // the power-loss step arms them
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cl := clustertest.Start(t, ctx, 3)
	watcher := cl.Watcher
	workers := []string{"worker-0", "worker-1", "worker-2"}
	target := cl.Pool(t, ctx).Spec.Configuration.Name
	for _, n := range workers {
		// The agent is config/default's DaemonSet: a container the machine sees in its PID
		// namespace, managing the machine through /rootfs.
		if got := cl.InMachine(t, ctx, n, "sh", "-c", `tr '\0' ' ' < /proc/$(pgrep -f "$1" | head -1)/cmdline`, "sh", devcluster.AgentProcess); !strings.Contains(got, "--root=/rootfs") {
			t.Fatalf("%s: the agent's command line is %q, not the DaemonSet's", n, got)
		}
	}

	t.Run("a file and a unit roll out one machine at a time; the unit runs", func(t *testing.T) {
		watcher.Reset()
		cl.Apply(t, ctx, "50-worker-chrony.yaml")
		cl.Apply(t, ctx, "60-worker-hello-unit.yaml")
		target = cl.WaitUpdatedWith(t, ctx, target, 3, "60-worker-hello-unit")
		if most, who := watcher.MaxUnavailable(); most != 1 {
			t.Fatalf("%d machines were unavailable at once (%v); maxUnavailable is 1", most, who)
		}
		for _, n := range workers {
			if got := cl.NodeFile(ctx, n, "/etc/chrony.conf"); !strings.Contains(got, "pool 0.pool.ntp.org iburst") {
				t.Errorf("%s: /etc/chrony.conf = %q", n, got)
			}
			if got := cl.InMachine(t, ctx, n, "systemctl", "is-active", "hello-mco.service"); got != "active" {
				t.Errorf("%s: hello-mco.service is %s inside the machine", n, got)
			}
		}
	})

	t.Run("a unit masked by a MachineConfig is masked inside each machine (the agent's pod acts through /rootfs)", func(t *testing.T) {
		mc := &mcfgv1.MachineConfig{
			ObjectMeta: metav1.ObjectMeta{Name: "65-worker-mask-timedated", Labels: map[string]string{protocol.RoleLabel: protocol.WorkerPool}},
			Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(
				`{"ignition":{"version":"3.4.0"},"systemd":{"units":[{"name":"systemd-timedated.service","mask":true}]}}`)}},
		}
		if err := cl.C.Create(ctx, mc); err != nil {
			t.Fatal(err)
		}
		target = cl.WaitUpdatedWith(t, ctx, target, 3, mc.Name)
		for _, n := range workers {
			// is-enabled exits 1 for a masked unit, saying "masked".
			if got := cl.InMachine(t, ctx, n, "sh", "-c", "systemctl is-enabled systemd-timedated.service || true"); got != "masked" {
				t.Errorf("%s: systemd-timedated.service is %q inside the machine, want masked", n, got)
			}
		}
	})

	t.Run("a kernel argument reboots each machine exactly once and is on its command line", func(t *testing.T) {
		watcher.Reset()
		before := map[string]int{}
		for _, n := range workers {
			before[n] = cl.Boots(t, n)
		}
		cl.Apply(t, ctx, "80-worker-kargs.yaml")
		target = cl.WaitUpdated(t, ctx, target, 3)
		for _, n := range workers {
			if got := cl.Boots(t, n) - before[n]; got != 1 {
				t.Errorf("%s booted %d times for the kernel argument, want exactly 1", n, got)
			}
			if cmdline := cl.InMachine(t, ctx, n, "cat", "/proc/cmdline"); !strings.Contains(" "+cmdline+" ", " audit=1 ") {
				t.Errorf("%s: /proc/cmdline = %q, want audit=1", n, cmdline)
			}
		}
		if most, who := watcher.MaxUnavailable(); most > 1 {
			t.Fatalf("%d machines were unavailable at once (%v)", most, who)
		}
	})

	t.Run("an OS image change rebases each machine, which boots the new image", func(t *testing.T) {
		st, err := devcluster.LoadState(cl.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := devcluster.BuildNodeImage(cl.Dir, newImage, testenv.RequireMCO(t), st); err != nil {
			t.Fatal(err)
		}
		watcher.Reset()
		before := map[string]int{}
		for _, n := range workers {
			before[n] = cl.Boots(t, n)
		}
		mc := clustertest.FileConfig("85-worker-os-image", "/etc/mco-os-image-note", "rebased\n")
		mc.Spec.OSImageURL = newImage
		if err := cl.C.Create(ctx, mc); err != nil {
			t.Fatal(err)
		}
		target = cl.WaitUpdated(t, ctx, target, 3)
		for _, n := range workers {
			if got := cl.Boots(t, n) - before[n]; got != 1 {
				t.Errorf("%s booted %d times for the new image, want exactly 1", n, got)
			}
			if got := cl.InMachine(t, ctx, n, "cat", machine.ImageRefPath); got != newImage {
				t.Errorf("%s runs image %q, want %q", n, got, newImage)
			}
		}
		if most, who := watcher.MaxUnavailable(); most > 1 {
			t.Fatalf("%d machines were unavailable at once (%v)", most, who)
		}
	})

	t.Run("a bad MachineConfig degrades the pool and leaves machines alone", func(t *testing.T) {
		bad := &mcfgv1.MachineConfig{
			ObjectMeta: metav1.ObjectMeta{Name: "90-worker-bad", Labels: map[string]string{protocol.RoleLabel: "worker"}},
			Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(
				`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/usr/local/bin/suid","mode":2541,"contents":{"source":"data:,x"}}]}}`)}},
		}
		if err := cl.C.Create(ctx, bad); err != nil {
			t.Fatal(err)
		}
		clustertest.Eventually(t, time.Minute, "RenderDegraded naming 90-worker-bad", func() bool {
			c := poolcondition.Get(&cl.Pool(t, ctx).Status, mcfgv1.MachineConfigPoolRenderDegraded)
			return c != nil && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, "90-worker-bad")
		})
		time.Sleep(2 * time.Second)
		for _, n := range workers {
			if got := cl.Node(t, ctx, n).Annotations[protocol.DesiredConfigAnnotation]; got != target {
				t.Errorf("%s was moved to %s by a config that failed to render", n, got)
			}
		}
		if err := cl.C.Delete(ctx, bad); err != nil {
			t.Fatal(err)
		}
		clustertest.Eventually(t, time.Minute, "RenderDegraded cleared", func() bool {
			return !poolcondition.IsTrue(&cl.Pool(t, ctx).Status, mcfgv1.MachineConfigPoolRenderDegraded)
		})
	})

	t.Run("drift inside a machine stops the rollout until the file is restored", func(t *testing.T) {
		original := cl.NodeFile(ctx, "worker-0", "/etc/chrony.conf")
		cl.InMachine(t, ctx, "worker-0", "sh", "-c", "echo 'server evil.example.com' > /etc/chrony.conf")
		clustertest.Eventually(t, time.Minute, "worker-0 Degraded naming the drifted file", func() bool {
			a := cl.Node(t, ctx, "worker-0").Annotations
			return a[protocol.StateAnnotation] == string(protocol.NodeDegraded) && strings.Contains(a[protocol.ReasonAnnotation], "/etc/chrony.conf")
		})
		cl.Apply(t, ctx, "70-worker-ssh.yaml")
		clustertest.Eventually(t, time.Minute, "a new target", func() bool { return cl.Pool(t, ctx).Spec.Configuration.Name != target })
		time.Sleep(5 * time.Second)
		for _, n := range workers {
			if got := cl.Node(t, ctx, n).Annotations[protocol.CurrentConfigAnnotation]; got != target {
				t.Fatalf("%s moved on to %s while worker-0 was degraded with maxUnavailable 1", n, got)
			}
		}
		cl.InMachine(t, ctx, "worker-0", "sh", "-c", fmt.Sprintf("printf '%%s' '%s' > /etc/chrony.conf", original))
		target = cl.WaitUpdated(t, ctx, target, 3)
		if got := cl.NodeFile(ctx, "worker-1", "/home/core/.ssh/authorized_keys.d/ignition"); !strings.Contains(got, "admin@example.com") {
			t.Errorf("core's key did not arrive after recovery: %q", got)
		}
	})

	t.Run("a joining machine has the pool's kernel argument before its Node is Done", func(t *testing.T) {
		var doneWithout []string
		stop := watchJoin(ctx, cl, "worker-3", &doneWithout)
		name, err := devcluster.Join(ctx, cl.Dir, "worker", testenv.ToolsDir(), testenv.RequireMCO(t))
		stop()
		if err != nil {
			t.Fatal(err)
		}
		if name != "worker-3" {
			t.Fatalf("joined %s, want worker-3", name)
		}
		if len(doneWithout) > 0 {
			t.Fatalf("%s reported Done before the kernel argument was in effect: %v", name, doneWithout)
		}
		if got := cl.Node(t, ctx, name).Annotations[protocol.CurrentConfigAnnotation]; got != target {
			t.Fatalf("%s booted into %q, want the pool's %s", name, got, target)
		}
		if cmdline := cl.InMachine(t, ctx, name, "cat", "/proc/cmdline"); !strings.Contains(" "+cmdline+" ", " audit=1 ") {
			t.Fatalf("%s: /proc/cmdline = %q", name, cmdline)
		}
		if got := cl.Boots(t, name); got != 2 {
			t.Errorf("%s booted %d times; want 2 (first boot, then the first-boot service's reboot for the kernel argument and image)", name, got)
		}
		if got := cl.InMachine(t, ctx, name, "cat", machine.ImageRefPath); got != newImage {
			t.Errorf("%s pivoted to image %q before its kubelet started, want %q", name, got, newImage)
		}
		if got := cl.InMachine(t, ctx, name, "stat", "-c", "%a %U", "/var/lib/kubelet/config.json"); got != "600 root" {
			t.Errorf("%s: the pull secret the first boot pulls with is %q, want mode 600 owned by root", name, got)
		}
		if got := cl.InMachine(t, ctx, name, "systemctl", "is-active", "hello-mco.service"); got != "active" {
			t.Errorf("%s: hello-mco.service is %s", name, got)
		}
		if got := cl.NodeFile(ctx, name, "/home/core/.ssh/authorized_keys.d/ignition"); !strings.Contains(got, "admin@example.com") {
			t.Errorf("%s lacks core's SSH key: %q", name, got)
		}
		clustertest.Eventually(t, time.Minute, "4 machines updated", func() bool {
			p := cl.Pool(t, ctx)
			return p.Status.MachineCount == 4 && p.Status.UpdatedMachineCount == 4
		})
		workers = append(workers, name)
	})

	readme := readmeSession(t, cl, "demo")
	t.Run("README's tour runs as written on this cluster, the demo's", func(t *testing.T) { readmeTour(t, ctx, cl, readme) })
	if t.Failed() {
		return
	}
	target = cl.Pool(t, ctx).Spec.Configuration.Name

	t.Run("power loss in the middle of an apply leaves the old or the new config", func(t *testing.T) {
		victim := "worker-1"
		// Pause the victim's agent in the middle of its next transaction (armed through a file
		// the restarted agent reads and removes), then cut the machine's power there.
		cl.InMachine(t, ctx, victim, "sh", "-c", `printf '%s=2\n' "$1" > `+failpoint.ArmFile+` && pkill -KILL -f "$2"`,
			"sh", failpoint.PauseAtEnv, devcluster.AgentProcess)
		before := cl.Boots(t, victim)
		mc := clustertest.FileConfig("75-worker-powerloss", "/etc/mco-powerloss", "written before the power cut\n")
		if err := cl.C.Create(ctx, mc); err != nil {
			t.Fatal(err)
		}
		clustertest.Eventually(t, 3*time.Minute, victim+"'s agent paused mid-apply", func() bool {
			out, err := cl.Output(ctx, victim, "cat", failpoint.PausedFile)
			return err == nil && strings.TrimSpace(out) != ""
		})
		if err := machine.PowerLoss(cl.MachineDir(victim)); err != nil {
			t.Fatal(err)
		}
		clustertest.Eventually(t, time.Minute, victim+" booted again", func() bool {
			st, err := machine.ReadStatus(cl.MachineDir(victim))
			return err == nil && st.Boots > before && st.State == machine.Running && st.LastExit == "power loss"
		})
		target = cl.WaitUpdated(t, ctx, target, int32(len(workers)))
		var events corev1.EventList
		if err := cl.C.List(ctx, &events); err != nil {
			t.Fatal(err)
		}
		recovered := false
		for _, e := range events.Items {
			if e.InvolvedObject.Name == victim && (e.Reason == "UpdateRolledBack" || e.Reason == "UpdateCompleted") {
				recovered = true
			}
		}
		if !recovered {
			t.Errorf("%s's agent did not report recovering the interrupted transaction", victim)
		}
		if got := cl.NodeFile(ctx, victim, "/etc/mco-powerloss"); got != "written before the power cut\n" {
			t.Errorf("%s: /etc/mco-powerloss = %q after recovery", victim, got)
		}
		if got := cl.Node(t, ctx, victim).Annotations[protocol.StateAnnotation]; got != string(protocol.NodeDone) {
			t.Errorf("%s is %s", victim, got)
		}
	})

	t.Run("revert returns a machine to its OS image's state, Ignition's first-boot files included", func(t *testing.T) {
		joined := "worker-3"
		for _, path := range []string{"/etc/chrony.conf", "/etc/mco-dev/role"} {
			if cl.NodeFile(ctx, joined, path) == "" {
				t.Fatalf("%s: %s missing before the revert", joined, path)
			}
		}
		// The agent (a DaemonSet pod) is frozen first: nothing may act on the machine meanwhile.
		out := cl.InMachine(t, ctx, joined, "sh", "-c", `pkill -STOP -f "$1" && `+machine.MCOPath+" daemon revert", "sh", devcluster.AgentProcess)
		if !strings.Contains(out, "reverted") {
			t.Fatalf("revert said %q", out)
		}
		for _, path := range []string{"/etc/chrony.conf", "/etc/mco-dev/role", "/etc/systemd/system/hello-mco.service", "/etc/machine-config-daemon/currentconfig"} {
			if _, err := cl.Output(ctx, joined, "test", "-e", path); err == nil {
				t.Errorf("%s: %s is still there after revert (written by Ignition at first boot; the image had none)", joined, path)
			}
		}
		if got := cl.InMachine(t, ctx, joined, "sh", "-c", "grep -c '^core:' /etc/passwd"); got != "1" {
			t.Errorf("revert touched the image's own accounts: %s", got)
		}
		workers = workers[:len(workers)-1]
		if err := cl.C.Delete(ctx, cl.Node(t, ctx, joined)); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a kernel type the host cannot apply is refused, naming the field, with nothing written", func(t *testing.T) {
		mc := clustertest.FileConfig("95-worker-realtime", "/etc/mco-realtime-marker", "must never be written\n")
		mc.Spec.KernelType = "realtime"
		if err := cl.C.Create(ctx, mc); err != nil {
			t.Fatal(err)
		}
		var refused string
		clustertest.Eventually(t, 2*time.Minute, "a machine Degraded naming kernelType", func() bool {
			for _, n := range workers {
				a := cl.Node(t, ctx, n).Annotations
				if a[protocol.StateAnnotation] == string(protocol.NodeDegraded) && strings.Contains(a[protocol.ReasonAnnotation], "kernelType") {
					refused = n
					return true
				}
			}
			return false
		})
		node := cl.Node(t, ctx, refused)
		if reason := node.Annotations[protocol.ReasonAnnotation]; !strings.Contains(reason, "realtime") || !strings.Contains(reason, "backend") {
			t.Errorf("the reason should name the value and the OS backend: %q", reason)
		}
		if node.Spec.Unschedulable {
			t.Errorf("%s was cordoned for an update that was refused up front", refused)
		}
		if strings.HasPrefix(node.Annotations[protocol.DesiredDrainAnnotation], "drain-") && strings.Contains(node.Annotations[protocol.DesiredDrainAnnotation], node.Annotations[protocol.DesiredConfigAnnotation]) {
			t.Errorf("%s asked for a drain for the refused config", refused)
		}
		for _, n := range workers {
			if _, err := cl.Output(ctx, n, "test", "-e", "/etc/mco-realtime-marker"); err == nil {
				t.Errorf("%s: /etc/mco-realtime-marker was written by a refused config", n)
			}
		}
	})

	if t.Run("README's monitoring applies to the install, with the Prometheus Operator's CRDs", func(t *testing.T) { readmeMonitoring(t, ctx, cl, readme) }) {
		t.Run("metrics answer only an allowed token, from a pod's network", func(t *testing.T) { metricsNeedAToken(t, ctx, cl) })
	}

	// Last, after everything above made the controller and the server work: their RBAC, as
	// installed, covered every call they made. The rules tests list the calls the code makes by
	// hand; a call they missed shows here (the controller's MachineConfigNode reads once did).
	t.Run("the controller and the server were never refused by RBAC", func(t *testing.T) {
		kubectl := testenv.RequireTool(t, "kubectl")
		for _, workload := range []string{"deployment/mco-controller", "daemonset/mco-server"} {
			logs, err := clustertest.Run(ctx, kubectl, "--kubeconfig", filepath.Join(cl.Dir, "kubeconfig"),
				"logs", "-n", devcluster.ServerNamespace, workload)
			if err != nil {
				t.Fatalf("kubectl logs %s: %v", workload, err)
			}
			for _, line := range strings.Split(string(logs), "\n") {
				if strings.Contains(line, " is forbidden: ") {
					t.Errorf("%s was refused: %.400s", workload, line)
				}
			}
		}
	})
}

// newImage is the second dev OS image the machines rebase to.
const newImage = "mco-dev.local/os:2"

// watchJoin records every moment the joining node is Done while its machine's command line lacks
// the pool's kernel argument.
func watchJoin(ctx context.Context, cl *clustertest.Cluster, name string, violations *[]string) func() {
	ctx, cancel := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for ctx.Err() == nil {
			var n corev1.Node
			if err := cl.C.Get(ctx, client.ObjectKey{Name: name}, &n); err == nil && rollout.Done(&n) {
				out, err := cl.Output(ctx, name, "cat", "/proc/cmdline")
				if err == nil && !strings.Contains(" "+strings.TrimSpace(out)+" ", " audit=1 ") {
					*violations = append(*violations, "Done with /proc/cmdline "+strings.TrimSpace(out))
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return func() { cancel(); <-finished }
}
