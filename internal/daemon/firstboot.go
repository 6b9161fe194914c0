package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/reboot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
	"github.com/mco-dev/mco/internal/protocol"
)

// Files of the first-boot service (seed 004's "service between bootstrap and kubelet").
const (
	// FirstBootDonePath: the first-boot service has finished (successfully or not).
	FirstBootDonePath = apply.StateDir + "/firstboot-done"
	// FirstBootFailedPath holds why the first boot could not bring the machine into its config;
	// the agent reports it as Degraded instead of Done.
	FirstBootFailedPath = apply.StateDir + "/firstboot-failed"
	// firstBootRebootedPath records the config the first boot rebooted for, so a change that
	// is still not in effect after that reboot is reported instead of rebooting forever.
	firstBootRebootedPath = apply.StateDir + "/firstboot-rebooted-for"
)

// FirstBootOptions configure FirstBoot; zero values are the real host.
type FirstBootOptions struct {
	Root string
	OS   osimage.Backend
	// Rebooter queues the reboot (default: the agent's, through a transient systemd unit).
	Rebooter reboot.Rebooter
	Log      *slog.Logger
}

// FirstBootResult says what the first boot did.
type FirstBootResult int

const (
	// FirstBootDone: every part of the config is in effect; the kubelet may start.
	FirstBootDone FirstBootResult = iota
	// FirstBootRebooting: changes were staged and a reboot queued.
	FirstBootRebooting
	// FirstBootFailed: the reason is in FirstBootFailedPath; the agent reports it.
	FirstBootFailed
	// FirstBootNothing: the machine has no encapsulated config or already finished.
	FirstBootNothing
	// FirstBootError: the service failed before it could record anything (the error says
	// why); nobody reports it but the unit, and it runs again at the next boot.
	FirstBootError
)

// FirstBoot applies what Ignition cannot (kernel arguments, kernel type, extensions, OS image,
// FIPS) on a machine's first boot, before the kubelet starts: it compares what booted with the
// config the server served, stages the difference with the host's OS backend and reboots once.
// After that reboot it verifies; what is still not in effect, or what the backend cannot apply
// at all, is recorded as the failure the agent reports, naming the field.
func FirstBoot(ctx context.Context, opts FirstBootOptions) (FirstBootResult, error) {
	if opts.Root == "" {
		opts.Root = "/"
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	root, err := noderoot.Open(opts.Root)
	if err != nil {
		return FirstBootError, err
	}
	defer root.Close()
	if _, err := root.MkdirAll(apply.StateDir, noderoot.DefaultDir); err != nil {
		return FirstBootError, err
	}
	if done, _ := root.Exists(FirstBootDonePath); done {
		return FirstBootNothing, nil
	}
	if ok, _ := root.Exists(protocol.EncapsulatedConfigPath); !ok {
		return FirstBootNothing, markFirstBootDone(root)
	}
	mc, err := readEncapsulated(root)
	if err != nil {
		return failFirstBoot(root, "", err)
	}
	if opts.OS == nil {
		opts.OS = osimage.Detect(opts.Root, func(p string) bool { ok, _ := root.Exists(p); return ok }, systemd.ExecRunner)
	}
	if opts.Rebooter == nil {
		opts.Rebooter = reboot.Systemd{Root: opts.Root, Run: systemd.ExecRunner}
	}
	linkPullSecret(root)
	booted, err := opts.OS.Booted(ctx)
	if err != nil {
		return failFirstBoot(root, mc.Name, fmt.Errorf("asking OS backend %q what booted: %w", opts.OS.Name(), err))
	}
	ms := osimage.Verify(mc.Spec, booted)
	if len(ms) == 0 {
		opts.Log.Info("first boot: every part of the config is in effect", "config", mc.Name, "backend", opts.OS.Name())
		return FirstBootDone, markFirstBootDone(root)
	}
	needed := osimage.Needed(mc.Spec, booted)
	if err := osimage.Refuse(opts.OS, needed, mc.Spec); err != nil {
		return failFirstBoot(root, mc.Name, fmt.Errorf("%s: %w", mc.Name, err))
	}
	if needed.Empty() { // FIPS: nothing can stage it
		return failFirstBoot(root, mc.Name, osimage.MismatchError(mc.Name, ms))
	}
	if prev, _ := root.ReadFile(firstBootRebootedPath); strings.TrimSpace(string(prev)) == mc.Name {
		return failFirstBoot(root, mc.Name, fmt.Errorf("still not in effect after the first boot's reboot: %w", osimage.MismatchError(mc.Name, ms)))
	}
	if err := opts.OS.Stage(ctx, needed); err != nil {
		return failFirstBoot(root, mc.Name, fmt.Errorf("staging %s with OS backend %q: %w", mc.Name, opts.OS.Name(), err))
	}
	if err := root.WriteFile(firstBootRebootedPath, []byte(mc.Name+"\n"), noderoot.WriteOptions{Perm: 0o644}); err != nil {
		return FirstBootError, err
	}
	opts.Log.Info("first boot: staged OS changes; rebooting", "config", mc.Name, "backend", opts.OS.Name())
	return FirstBootRebooting, opts.Rebooter.Reboot(ctx, "first boot: OS changes staged for "+mc.Name)
}

func readEncapsulated(root *noderoot.Root) (*mcfgv1.MachineConfig, error) {
	data, err := root.ReadFile(protocol.EncapsulatedConfigPath)
	if err != nil {
		return nil, err
	}
	mc := &mcfgv1.MachineConfig{}
	if err := json.Unmarshal(data, mc); err != nil {
		return nil, fmt.Errorf("%s: %w", protocol.EncapsulatedConfigPath, err)
	}
	return mc, nil
}

// failFirstBoot records why the machine is not in config: the config's name on the first line
// (empty when unknown), the reason after it.
func failFirstBoot(root *noderoot.Root, config string, cause error) (FirstBootResult, error) {
	if err := root.WriteFile(FirstBootFailedPath, []byte(config+"\n"+cause.Error()+"\n"), noderoot.WriteOptions{Perm: 0o644}); err != nil {
		return FirstBootError, errors.Join(cause, err)
	}
	return FirstBootFailed, errors.Join(cause, markFirstBootDone(root))
}

func markFirstBootDone(root *noderoot.Root) error {
	return root.WriteFile(FirstBootDonePath, nil, noderoot.WriteOptions{Perm: 0o644})
}

// linkPullSecret lets rpm-ostree and bootc pull with the cluster's pull secret, which the
// served config puts where the kubelet reads it (as OpenShift's first boot does). Paths resolve
// inside the root, as everything the agent writes.
func linkPullSecret(root *noderoot.Root) {
	const link = "/run/ostree/auth.json"
	if ok, _ := root.Exists(protocol.PullSecretPath); !ok {
		return
	}
	if ok, _ := root.Exists(link); ok {
		return
	}
	if _, err := root.MkdirAll(path.Dir(link), noderoot.DefaultDir); err != nil {
		return
	}
	_ = root.Symlink(link, protocol.PullSecretPath, false)
}

// firstBootFailure is the recorded first-boot failure if it concerns config (the machine is
// still in the config it first booted into); "" otherwise. The record is written before the
// agent starts and never changes while it runs, so it is read once per process.
func (a *Agent) firstBootFailure(config string) string {
	if a.s.firstBoot == nil {
		data, _ := a.root.ReadFile(FirstBootFailedPath)
		record := string(data)
		a.s.firstBoot = &record
	}
	failed, reason, found := strings.Cut(*a.s.firstBoot, "\n")
	if !found || failed != "" && failed != config {
		return ""
	}
	return strings.TrimSpace(reason)
}
