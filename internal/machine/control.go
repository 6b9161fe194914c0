package machine

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Command returns a command that runs args inside the running machine in dir: its root, its
// PID, mount, UTS and IPC namespaces, like `kubectl exec` into a node.
func Command(ctx context.Context, dir string, args ...string) (*exec.Cmd, error) {
	st, err := ReadStatus(dir)
	if err != nil {
		return nil, err
	}
	if st.State != Running || st.InitPID == 0 {
		return nil, fmt.Errorf("%s: %w (state %s)", dir, ErrNotRunning, st.State)
	}
	nsArgs := append([]string{"-t", fmt.Sprint(st.InitPID), "-m", "-p", "-u", "-i", "-r", "-w", "--"}, args...)
	cmd := exec.CommandContext(ctx, "nsenter", nsArgs...)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "SYSTEMD_PAGER=", "TERM=dumb"}
	return cmd, nil
}

// Output runs args inside the machine and returns its standard output; the error carries
// standard error.
func Output(ctx context.Context, dir string, args ...string) (string, error) {
	cmd, err := Command(ctx, dir, args...)
	if err != nil {
		return "", err
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// PowerLoss cuts the machine's power: its init is killed, as a host losing power stops
// mid-write. Its supervisor boots it again.
func PowerLoss(dir string) error {
	st, err := ReadStatus(dir)
	if err != nil {
		return err
	}
	if st.InitPID == 0 {
		return fmt.Errorf("%s: %w", dir, ErrNotRunning)
	}
	return syscall.Kill(st.InitPID, syscall.SIGKILL)
}

// WaitSystemRunning waits until systemd inside the machine finished booting (running, or
// degraded when some unit failed) and returns that state.
func WaitSystemRunning(ctx context.Context, dir string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		out, _ := Output(ctx, dir, "systemctl", "is-system-running")
		last = strings.TrimSpace(out)
		if last == "running" || last == "degraded" {
			return last, nil
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return last, fmt.Errorf("%s: systemd not up after %s (last state %q)", dir, timeout, last)
}
