package machine

import (
	"bytes"
	"context"
	"fmt"
	"os"
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

// Stop powers the machine in dir off through its supervisor (SIGTERM, up to grace), then makes
// sure its init is gone: a supervisor killed outright leaves its machine running (systemd as a
// namespace's PID 1 does not get the parent-death signal), so the init is killed by its PID.
func Stop(dir string, grace time.Duration) error {
	st, err := ReadStatus(dir)
	if err != nil {
		return nil // never booted
	}
	if Alive(st.SupervisorPID) {
		_ = syscall.Kill(st.SupervisorPID, syscall.SIGTERM)
		deadline := time.Now().Add(grace)
		for Alive(st.SupervisorPID) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if Alive(st.SupervisorPID) {
			_ = syscall.Kill(st.SupervisorPID, syscall.SIGKILL)
		}
	}
	return killOrphan(st)
}

// killOrphan kills the init the status names if it still runs and is a machine's init (PID 1 of
// its own namespace), not a recycled PID.
func killOrphan(st Status) error {
	if st.InitPID == 0 || !Alive(st.InitPID) {
		return nil
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", st.InitPID))
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "NSpid:" && f[2] == "1" {
			if err := syscall.Kill(st.InitPID, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
				return err
			}
			for i := 0; i < 100 && Alive(st.InitPID); i++ {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	return nil
}

// Alive reports whether pid still runs (and is not a zombie).
func Alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
