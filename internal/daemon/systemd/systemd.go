// Package systemd is the agent's narrow view of systemd: change enablement in a node root
// offline, and reload, restart or daemon-reload the running system.
package systemd

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path"
	"strings"
)

// Manager is everything the agent asks of systemd.
type Manager interface {
	// Enable, Disable and Preset edit the enablement symlinks under the root: through the
	// running systemd when the root is "/", offline (systemctl --root) otherwise.
	Enable(ctx context.Context, units ...string) error
	Disable(ctx context.Context, units ...string) error
	Preset(ctx context.Context, units ...string) error
	// IsEnabled reports whether the unit is enabled in the root.
	IsEnabled(ctx context.Context, unit string) (bool, error)
	// Reload, Restart and DaemonReload act on the running system of the node.
	Reload(ctx context.Context, unit string) error
	Restart(ctx context.Context, unit string) error
	DaemonReload(ctx context.Context) error
}

// Runner runs a command and returns its combined output; tests substitute it.
type Runner func(ctx context.Context, name string, args ...string) ([]byte, error)

// ExecRunner runs commands with os/exec.
func ExecRunner(ctx context.Context, name string, args ...string) ([]byte, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// Systemctl implements Manager with the systemctl binary.
type Systemctl struct {
	// Root is the node root directory ("/" on the host).
	Root string
	Run  Runner
}

// New returns the real implementation for a node root.
func New(root string) *Systemctl { return &Systemctl{Root: root, Run: ExecRunner} }

func (s *Systemctl) offline(ctx context.Context, verb string, units []string) error {
	if len(units) == 0 {
		return nil
	}
	args := append(s.rootArgs(verb, "--"), units...)
	if out, err := s.Run(ctx, "systemctl", args...); err != nil {
		return fmt.Errorf("systemctl %s %s: %w: %s", verb, strings.Join(units, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (s *Systemctl) Enable(ctx context.Context, units ...string) error {
	return s.offline(ctx, "enable", units)
}

func (s *Systemctl) Disable(ctx context.Context, units ...string) error {
	return s.offline(ctx, "disable", units)
}

func (s *Systemctl) Preset(ctx context.Context, units ...string) error {
	return s.offline(ctx, "preset", units)
}

// IsEnabled treats "enabled", "enabled-runtime", "alias", "static" and "indirect" as enabled
// only for the first two; systemctl's exit code alone cannot tell "disabled" from an error.
func (s *Systemctl) IsEnabled(ctx context.Context, unit string) (bool, error) {
	out, err := s.Run(ctx, "systemctl", append(s.rootArgs("is-enabled", "--"), unit)...)
	state := strings.TrimSpace(string(out))
	switch state {
	case "enabled", "enabled-runtime":
		return true, nil
	case "disabled", "masked", "masked-runtime", "static", "indirect", "linked", "linked-runtime", "alias", "generated", "transient":
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("systemctl is-enabled %s: %w: %s", unit, err, state)
	}
	return false, nil
}

// rootArgs addresses the node's unit files: an agent on the host itself ("/") asks the running
// systemd, which edits the links and reloads its own view of them; an agent with the host's root
// mounted elsewhere (a pod, --root /rootfs) edits the links offline.
func (s *Systemctl) rootArgs(args ...string) []string {
	if s.Root == "" || path.Clean(s.Root) == "/" {
		return args
	}
	return append([]string{"--root=" + s.Root}, args...)
}

// live runs systemctl against the node's running systemd.
func (s *Systemctl) live(ctx context.Context, args ...string) error {
	return RunInRoot(ctx, s.Run, s.Root, "systemctl", args...)
}

// RunInRoot runs a command of the node's running system: directly on the host, chrooted into
// root otherwise (the agent in a pod with the host root at /rootfs); an unset root is the host.
// The error names the command and carries its output, which is where these tools say why.
func RunInRoot(ctx context.Context, run Runner, root, name string, args ...string) error {
	if root != "" && path.Clean(root) != "/" {
		args = append([]string{root, name}, args...)
		name = "chroot"
	}
	if out, err := run(ctx, name, args...); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (s *Systemctl) Reload(ctx context.Context, unit string) error {
	return s.live(ctx, "reload", "--", unit)
}

func (s *Systemctl) Restart(ctx context.Context, unit string) error {
	return s.live(ctx, "restart", "--", unit)
}

func (s *Systemctl) DaemonReload(ctx context.Context) error { return s.live(ctx, "daemon-reload") }
