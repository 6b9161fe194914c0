package daemon_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/reboot"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// onPackageHost creates the configs (in no pool), a root provisioned into the first, a bare
// Node name and a package-based host booted with cmdline, for the agent to start on.
func onPackageHost(t *testing.T, ctx context.Context, name, cmdline string, mcs ...*mcfgv1.MachineConfig) (string, *packageHost) {
	t.Helper()
	for _, mc := range mcs {
		mc.SetLabels(nil)
		create(t, ctx, mc)
	}
	root := newRoot(t)
	provision(t, root, mcs[0])
	createBareNode(t, ctx, name)
	return root, newPackageHost(t, root, cmdline)
}

// createBareNode is a Ready Node in no pool: the test moves it by setting desiredConfig itself.
func createBareNode(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	createReadyNode(t, ctx, name, nil)
}

func annotate(t testing.TB, ctx context.Context, name string, kv map[string]string) {
	t.Helper()
	n := node(t, ctx, name)
	patch := client.MergeFrom(n.DeepCopy())
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	for k, v := range kv {
		n.Annotations[k] = v
	}
	if err := env.Client.Patch(ctx, n, patch); err != nil {
		t.Fatal(err)
	}
}

func awaitNode(t testing.TB, ctx context.Context, name, what string, cond func(a map[string]string) bool) *corev1.Node {
	t.Helper()
	var n *corev1.Node
	eventually(t, 60*time.Second, name+" "+what, func() (bool, string) {
		n = node(t, ctx, name)
		return cond(n.Annotations), nodeSummary(n)
	})
	return n
}

func doneIn(config string) func(map[string]string) bool {
	return func(a map[string]string) bool {
		return a[protocol.StateAnnotation] == string(protocol.NodeDone) && a[protocol.CurrentConfigAnnotation] == config
	}
}

// packageHost is a node whose OS backend is the real package backend (kernel-install flavor)
// on the temp root, with the kernel's command line in a file the test plays boot loader with.
type packageHost struct {
	root, cmdline string
	commands      atomic.Int32
}

func newPackageHost(t *testing.T, root, booted string) *packageHost {
	h := &packageHost{root: root, cmdline: filepath.Join(t.TempDir(), "cmdline")}
	if err := os.WriteFile(h.cmdline, []byte(booted+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

// configure gives each agent process a fresh backend, as a restarted agent has.
func (h *packageHost) configure(o *daemon.Options) {
	b := osimage.NewPackage(h.root, osimage.KernelInstall, func(context.Context, string, ...string) ([]byte, error) {
		h.commands.Add(1)
		return nil, nil
	})
	b.Kernel = osimage.Kernel{CmdlinePath: h.cmdline, FIPSPath: filepath.Join(h.root, "no-fips"), ReleasePath: filepath.Join(h.root, "no-release")}
	o.OS = b
}

// boot is the boot loader: the next kernel gets the command line the root staged.
func (h *packageHost) boot(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(h.root, osimage.KernelCmdlinePath))
	if err != nil {
		t.Errorf("boot loader: %v", err)
		return
	}
	if err := os.WriteFile(h.cmdline, data, 0o644); err != nil {
		t.Errorf("boot loader: %v", err)
	}
}

// TestUnsupportedOSChangeIsRefused: a kernel type on a host whose backend cannot switch
// kernels makes the node Degraded naming the field, the value and the backend, before any
// drain or write; the config's files are not written either.
func TestUnsupportedOSChangeIsRefused(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	r0 := machineConfig("rendered-os-refuse-0", map[string]string{"/etc/os-test.conf": "zero"})
	r1 := machineConfig("rendered-os-refuse-1", map[string]string{"/etc/os-test.conf": "one", "/etc/os-new.conf": "new"})
	r1.Spec.KernelType = "realtime"
	root, host := onPackageHost(t, ctx, "os-refuse", "BOOT_IMAGE=/vmlinuz ro quiet", r0, r1)
	ag := startAgentWith(t, "os-refuse", root, host.configure, nil)
	awaitNode(t, ctx, "os-refuse", "Done in "+r0.Name, doneIn(r0.Name))

	annotate(t, ctx, "os-refuse", map[string]string{protocol.DesiredConfigAnnotation: r1.Name})
	n := awaitNode(t, ctx, "os-refuse", "Degraded by the refusal", func(a map[string]string) bool {
		return a[protocol.StateAnnotation] == string(protocol.NodeDegraded)
	})
	reason := n.Annotations[protocol.ReasonAnnotation]
	want := `cannot move to rendered-os-refuse-1: kernelType: "realtime" cannot be applied on this host: OS backend "package (kernel-install)" has no way to switch kernels; nothing was written`
	if reason != want {
		t.Errorf("reason %q\nwant   %q", reason, want)
	}
	time.Sleep(2 * time.Second) // give a wrong agent time to go on
	n = node(t, ctx, "os-refuse")
	if d := n.Annotations[protocol.DesiredDrainAnnotation]; d == protocol.DrainRequest(r1.Name) || n.Spec.Unschedulable {
		t.Errorf("a refused update asked for a drain: %s unschedulable=%v", nodeSummary(n), n.Spec.Unschedulable)
	}
	if n.Annotations[protocol.CurrentConfigAnnotation] != r0.Name || n.Annotations[protocol.StateAnnotation] != string(protocol.NodeDegraded) {
		t.Errorf("node moved on: %s", nodeSummary(n))
	}
	mustContain(t, root, "/etc/os-test.conf", "zero")
	for _, p := range []string{"/etc/os-new.conf", osimage.KernelCmdlinePath, osimage.PackageStagedPath, apply.JournalPath} {
		if _, err := os.Lstat(filepath.Join(root, p)); !os.IsNotExist(err) {
			t.Errorf("%s was written (err=%v)", p, err)
		}
	}
	if ag.reboots.Load() != 0 || host.commands.Load() != 0 {
		t.Errorf("reboots %d, commands %d", ag.reboots.Load(), host.commands.Load())
	}
}

// TestBootedConfigIsVerified: after the reboot into a config with kernel arguments, the node
// is Done only if the booted command line has them. A boot loader that ignored the staged
// command line leaves the node Degraded naming the argument; the force file stages it again,
// and once it boots the node is Done.
func TestBootedConfigIsVerified(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	r0 := machineConfig("rendered-os-verify-0", map[string]string{"/etc/os-verify.conf": "zero"})
	r0.Spec.KernelArguments = []string{"quiet"}
	r1 := machineConfig("rendered-os-verify-1", map[string]string{"/etc/os-verify.conf": "one"})
	r1.Spec.KernelArguments = []string{"quiet", "audit=1 nosmt"}
	root, host := onPackageHost(t, ctx, "os-verify", "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet", r0, r1)
	var bootLoaderWorks atomic.Bool
	// Each agent process gets its own registry, as after a real reboot.
	var registry atomic.Pointer[prometheus.Registry]
	configure := func(o *daemon.Options) {
		host.configure(o)
		reg := prometheus.NewRegistry()
		registry.Store(reg)
		o.Metrics = reg
	}
	ag := startAgentWith(t, "os-verify", root, configure, func() {
		if bootLoaderWorks.Load() {
			host.boot(t)
		}
	})
	// r0's argument is on the booted command line: verified, Done.
	awaitNode(t, ctx, "os-verify", "Done in "+r0.Name, doneIn(r0.Name))

	annotate(t, ctx, "os-verify", map[string]string{protocol.DesiredConfigAnnotation: r1.Name})
	n := awaitNode(t, ctx, "os-verify", "Degraded: booted without the new arguments", func(a map[string]string) bool {
		return a[protocol.StateAnnotation] == string(protocol.NodeDegraded) && strings.HasPrefix(a[protocol.ReasonAnnotation], "booted system")
	})
	// Not in effect: the Node does not claim the new config as current either.
	if got := n.Annotations[protocol.CurrentConfigAnnotation]; got != r0.Name {
		t.Errorf("currentConfig %q while r1 is not in effect", got)
	}
	want := `booted system does not match rendered-os-verify-1: kernelArguments: "audit=1" is not on the booted kernel command line; kernelArguments: "nosmt" is not on the booted kernel command line`
	if got := n.Annotations[protocol.ReasonAnnotation]; got != want {
		t.Errorf("reason %q\nwant   %q", got, want)
	}
	if ag.reboots.Load() != 1 {
		t.Errorf("%d reboots, want 1", ag.reboots.Load())
	}
	// A pivot error for the alert MCDPivotError, counted once however often the agent re-checks.
	if err := testutil.GatherAndCompare(registry.Load(), strings.NewReader(`
# HELP mcd_pivot_errors_total OS changes that failed: the OS backend could not stage them, or what booted afterwards is not what the config asks for
# TYPE mcd_pivot_errors_total counter
mcd_pivot_errors_total 1
`), "mcd_pivot_errors_total"); err != nil {
		t.Error(err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, osimage.KernelCmdlinePath)); string(got) != "root=/dev/vda1 ro quiet audit=1 nosmt\n" {
		t.Errorf("staged command line %q", got)
	}
	mustContain(t, root, "/etc/os-verify.conf", "one")
	time.Sleep(2 * time.Second) // drift ticks must not turn it Done
	if n := node(t, ctx, "os-verify"); n.Annotations[protocol.StateAnnotation] != string(protocol.NodeDegraded) {
		t.Fatalf("reported %s for a config not in effect", nodeSummary(n))
	}

	// The force file stages what the booted system lacks again; this time the boot loader
	// takes it, and the node is Done.
	bootLoaderWorks.Store(true)
	if err := os.WriteFile(filepath.Join(root, daemon.ForceFilePath), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	annotate(t, ctx, "os-verify", map[string]string{"test.mco.dev/wake": "1"})
	awaitNode(t, ctx, "os-verify", "Done in "+r1.Name, doneIn(r1.Name))
	if got, _ := os.ReadFile(host.cmdline); string(got) != "root=/dev/vda1 ro quiet audit=1 nosmt\n" {
		t.Errorf("booted command line %q: the forced stage duplicated or lost arguments", got)
	}
	if n := node(t, ctx, "os-verify"); n.Spec.Unschedulable || n.Annotations[protocol.ReasonAnnotation] != "" {
		t.Errorf("not uncordoned or reason kept: %s unschedulable=%v", nodeSummary(n), n.Spec.Unschedulable)
	}
	if ag.reboots.Load() != 2 {
		t.Errorf("%d reboots, want 2", ag.reboots.Load())
	}
}

// TestConfigNotInEffectIsReportedAndRepairable: a node committed to a config its backend could
// never apply (an older agent skipped the kernel type and reported Done) is Degraded at start,
// naming the field; the config that drops the field is no change to refuse (the booted system
// already has the default kernel), and takes the node back to Done without a reboot.
func TestConfigNotInEffectIsReportedAndRepairable(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	r0 := machineConfig("rendered-os-repair-0", map[string]string{"/etc/os-repair.conf": "zero"})
	r0.Spec.KernelType = "realtime"
	r0.Spec.Extensions = []string{"usbguard"}
	r1 := machineConfig("rendered-os-repair-1", map[string]string{"/etc/os-repair.conf": "zero"})
	root, host := onPackageHost(t, ctx, "os-repair", "ro quiet", r0, r1)
	ag := startAgentWith(t, "os-repair", root, host.configure, nil)
	n := awaitNode(t, ctx, "os-repair", "Degraded: r0 is not in effect", func(a map[string]string) bool {
		return a[protocol.StateAnnotation] == string(protocol.NodeDegraded)
	})
	want := `booted system does not match rendered-os-repair-0: extensions: "usbguard" is not booted: this host's OS backend has no extensions; ` +
		`kernelType: booted none this host's OS backend can tell, config wants "realtime"`
	if got := n.Annotations[protocol.ReasonAnnotation]; got != want {
		t.Errorf("reason %q\nwant   %q", got, want)
	}

	annotate(t, ctx, "os-repair", map[string]string{protocol.DesiredConfigAnnotation: r1.Name})
	awaitNode(t, ctx, "os-repair", "Done in "+r1.Name, doneIn(r1.Name))
	if ag.reboots.Load() != 0 || host.commands.Load() != 0 {
		t.Errorf("reboots %d, commands %d: nothing changes on the OS, nothing to reboot for", ag.reboots.Load(), host.commands.Load())
	}
}

// A machine whose first boot could not bring it into its config is never shown Done, not even
// for the moment between the agent seeding its Node from the server's file (which says Done)
// and its first verification.
func TestFirstBootFailureIsNeverDone(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	r0 := machineConfig("rendered-os-firstboot-0", map[string]string{"/etc/os-firstboot.conf": "zero"})
	root, host := onPackageHost(t, ctx, "os-firstboot", "ro quiet", r0)
	reason := "kernelType: \"realtime\" cannot be applied on this host"
	if err := os.WriteFile(filepath.Join(root, daemon.FirstBootFailedPath), []byte(r0.Name+"\n"+reason+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=os-firstboot"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	startAgentWith(t, "os-firstboot", root, host.configure, nil)
	deadline := time.After(time.Minute)
	for {
		select {
		case ev := <-w.ResultChan():
			n, ok := ev.Object.(*corev1.Node)
			if !ok {
				continue
			}
			switch a := n.Annotations; {
			case a[protocol.CurrentConfigAnnotation] != "" && protocol.NodeState(a[protocol.StateAnnotation]) == protocol.NodeDone:
				t.Fatalf("the node showed Done in %s although its first boot failed", a[protocol.CurrentConfigAnnotation])
			case a[protocol.StateAnnotation] == string(protocol.NodeDegraded):
				if !strings.Contains(a[protocol.ReasonAnnotation], reason) {
					t.Fatalf("Degraded without the first boot's reason: %q", a[protocol.ReasonAnnotation])
				}
				return
			}
		case <-deadline:
			t.Fatal("the node never reported the first boot's failure")
		}
	}
}

// TestInterruptedRebootIsTakenAgain: the agent committed a config that needs a reboot but died
// before the reboot happened (killed, or the API server was down when it marked the Node).
// The restarted agent finds the committed config not booted in this same boot and reboots,
// instead of reporting a mismatch forever.
func TestInterruptedRebootIsTakenAgain(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	r0 := machineConfig("rendered-os-interrupted-0", map[string]string{"/etc/os-interrupted.conf": "zero"})
	r1 := machineConfig("rendered-os-interrupted-1", map[string]string{"/etc/os-interrupted.conf": "one"})
	r1.Spec.KernelArguments = []string{"audit=1"}
	root, host := onPackageHost(t, ctx, "os-interrupted", "ro quiet", r0, r1)
	var calls atomic.Int32
	ag := startAgentWith(t, "os-interrupted", root, host.configure, func() {
		if calls.Add(1) == 1 {
			rebootLost(t, root, r1.Name)
			return
		}
		host.boot(t)
	})
	awaitNode(t, ctx, "os-interrupted", "Done in "+r0.Name, doneIn(r0.Name))
	annotate(t, ctx, "os-interrupted", map[string]string{protocol.DesiredConfigAnnotation: r1.Name})
	awaitNode(t, ctx, "os-interrupted", "Done in "+r1.Name, doneIn(r1.Name))
	if got := ag.reboots.Load(); got != 2 {
		t.Errorf("%d reboots, want 2 (the interrupted one and the one taken again)", got)
	}
	if got, _ := os.ReadFile(host.cmdline); string(got) != "ro quiet audit=1\n" {
		t.Errorf("booted command line %q", got)
	}
}

// TestLostRebootIsAskedForAgain: systemd accepted the reboot but it never happened (the agent
// keeps running). After RebootTimeout the agent asks again instead of waiting forever.
func TestLostRebootIsAskedForAgain(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	r0 := machineConfig("rendered-os-lost-reboot-0", map[string]string{"/etc/os-lost-reboot.conf": "zero"})
	r1 := machineConfig("rendered-os-lost-reboot-1", map[string]string{"/etc/os-lost-reboot.conf": "one"})
	r1.Spec.KernelArguments = []string{"audit=1"}
	root, host := onPackageHost(t, ctx, "os-lost-reboot", "ro quiet", r0, r1)
	var asked atomic.Int32
	ag := startAgentWith(t, "os-lost-reboot", root, func(o *daemon.Options) {
		host.configure(o)
		o.RebootTimeout = 2 * time.Second
		boot := o.Rebooter
		o.Rebooter = reboot.Func(func(ctx context.Context, reason string) error {
			if asked.Add(1) == 1 {
				return nil // accepted, and lost
			}
			return boot.Reboot(ctx, reason)
		})
	}, func() { host.boot(t) })
	awaitNode(t, ctx, "os-lost-reboot", "Done in "+r0.Name, doneIn(r0.Name))
	annotate(t, ctx, "os-lost-reboot", map[string]string{protocol.DesiredConfigAnnotation: r1.Name})
	awaitNode(t, ctx, "os-lost-reboot", "Done in "+r1.Name, doneIn(r1.Name))
	if got := asked.Load(); got != 2 {
		t.Errorf("asked for %d reboots, want 2 (the lost one and the one asked for again)", got)
	}
	if got := ag.reboots.Load(); got != 1 {
		t.Errorf("%d reboots happened, want 1", got)
	}
}

// rebootLost plays an agent process that ended before its reboot while the power stayed on:
// the machine never rebooted, and /run still says config waits for its reboot. Call it from
// startAgentWith's onReboot.
func rebootLost(t *testing.T, root, config string) {
	if err := os.MkdirAll(filepath.Join(root, filepath.Dir(daemon.RebootPendingPath)), 0o755); err != nil {
		t.Error(err)
	}
	if err := os.WriteFile(filepath.Join(root, daemon.RebootPendingPath), []byte(config+"\n"), 0o644); err != nil {
		t.Error(err)
	}
}

// TestPendingRebootOutlivesARebootlessUpdate: the agent committed a config that needs a reboot
// (a file no policy covers) and ended before the reboot; meanwhile the node was moved on to a
// config that, from there, needs none. The reboot is still owed: without it the first
// config's file would never take effect, and the node would be Done all the same.
func TestPendingRebootOutlivesARebootlessUpdate(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const name = "os-moved-on"
	r0 := machineConfig("rendered-os-moved-on-0", map[string]string{"/etc/os-moved-on.conf": "zero"})
	r1 := machineConfig("rendered-os-moved-on-1", map[string]string{"/etc/os-moved-on.conf": "one"})
	r2 := machineConfig("rendered-os-moved-on-2", map[string]string{"/etc/os-moved-on.conf": "one",
		"/etc/containers/registries.d/os-moved-on.yaml": "two"}) // reload crio: no reboot from r1
	createConfigs(t, ctx, r0, r1, r2)
	root := newRoot(t)
	provision(t, root, r0)
	createBareNode(t, ctx, name)
	var calls atomic.Int32
	ag := startAgentWith(t, name, root, nil, func() {
		if calls.Add(1) > 1 {
			return
		}
		rebootLost(t, root, r1.Name)
		// Moved on before the next agent process starts, so it finds r1 committed and r2
		// desired.
		n := &corev1.Node{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
			t.Error(err)
			return
		}
		patch := client.MergeFrom(n.DeepCopy())
		n.Annotations[protocol.DesiredConfigAnnotation] = r2.Name
		if err := env.Client.Patch(ctx, n, patch); err != nil {
			t.Error(err)
		}
	})
	awaitNode(t, ctx, name, "Done in "+r0.Name, doneIn(r0.Name))
	annotate(t, ctx, name, map[string]string{protocol.DesiredConfigAnnotation: r1.Name})
	awaitNode(t, ctx, name, "Done in "+r2.Name, doneIn(r2.Name))
	if got := ag.reboots.Load(); got != 2 {
		t.Errorf("%d reboots, want 2 (the lost one into %s, and the one still owed when moving on to %s)", got, r1.Name, r2.Name)
	}
	mustContain(t, root, "/etc/containers/registries.d/os-moved-on.yaml", "two")
}

// bootedUnknown is an OS backend that cannot say what booted.
type bootedUnknown struct{ osimage.Backend }

func (bootedUnknown) Booted(context.Context) (osimage.Booted, error) {
	return osimage.Booted{}, errors.New("status unavailable")
}

// TestPendingRebootIsTakenWhateverBooted: a reboot still owed is taken even when the OS backend
// cannot say what booted: asking is only needed to verify, after the reboot.
func TestPendingRebootIsTakenWhateverBooted(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const name = "os-pending-unknown"
	r0 := machineConfig("rendered-os-pending-unknown-0", map[string]string{"/etc/os-pending-unknown.conf": "zero"})
	r1 := machineConfig("rendered-os-pending-unknown-1", map[string]string{"/etc/os-pending-unknown.conf": "zero"})
	r1.Spec.KernelArguments = []string{"audit=1"}
	root, host := onPackageHost(t, ctx, name, "ro quiet", r0, r1)
	var starts, reboots atomic.Int32
	ag := startAgentWith(t, name, root, func(o *daemon.Options) {
		host.configure(o)
		if starts.Add(1) == 2 { // the process after the lost reboot
			o.OS = bootedUnknown{o.OS}
		}
	}, func() {
		if reboots.Add(1) == 1 {
			rebootLost(t, root, r1.Name)
			return
		}
		host.boot(t)
	})
	awaitNode(t, ctx, name, "Done in "+r0.Name, doneIn(r0.Name))
	annotate(t, ctx, name, map[string]string{protocol.DesiredConfigAnnotation: r1.Name})
	awaitNode(t, ctx, name, "Done in "+r1.Name, doneIn(r1.Name))
	if got := ag.reboots.Load(); got != 2 {
		t.Errorf("%d reboots, want 2", got)
	}
}
