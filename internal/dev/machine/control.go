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

// Command returns a command that runs args inside the running machine in dir, like `kubectl
// exec` into a node: in its PID, mount (whose root is the machine's root), UTS, IPC, network
// and cgroup namespaces, and in the machine's root cgroup of every hierarchy.
func Command(ctx context.Context, dir string, args ...string) (*exec.Cmd, error) {
	st, err := ReadStatus(dir)
	if err != nil {
		return nil, err
	}
	if st.State != Running || st.InitPID == 0 {
		return nil, fmt.Errorf("%s: %w (state %s)", dir, ErrNotRunning, st.State)
	}
	nsArgs := append([]string{"-t", fmt.Sprint(st.InitPID), "-m", "-p", "-u", "-i", "-n", "-C", "--", "sh", "-c", joinMachineCgroups, "sh"}, args...)
	cmd := exec.CommandContext(ctx, "nsenter", nsArgs...)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "SYSTEMD_PAGER=", "TERM=dumb"}
	return cmd, nil
}

// joinMachineCgroups moves the shell into the machine's root cgroups (the roots of its cgroup
// namespace, under /sys/fs/cgroup inside) and execs the command: what runs in a machine is
// accounted and limited as the machine, and a command entering only the namespace would sit
// outside its root. nsenter can join namespaces, not cgroups. A root whose controllers systemd
// enabled for its children refuses processes (cgroup2 on a unified host): the command then stays
// where it was started.
const joinMachineCgroups = `for procs in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/*/cgroup.procs; do echo 0 >"$procs"; done 2>/dev/null; exec "$@"`

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
// namespace's PID 1 does not get the parent-death signal), so the init is killed by its PID. It
// returns nil only when neither the supervisor nor the machine runs any more.
func Stop(dir string, grace time.Duration) error {
	st, err := ReadStatus(dir)
	if err != nil {
		return nil // never booted
	}
	if Alive(st.SupervisorPID) {
		if err := Terminate(st.SupervisorPID, grace); err != nil {
			return fmt.Errorf("%s: supervisor: %w", dir, err)
		}
		// The supervisor may have booted the machine again since the status was read; what it
		// wrote last names the init it left.
		if now, err := ReadStatus(dir); err == nil {
			st = now
		}
	}
	c, _ := Load(dir) // without its config the machine's cgroups cannot be told apart, and stay
	return killOrphan(st, c)
}

// killOrphan kills the init the status names if it still runs and is a machine's init (PID 1 of
// its own namespace), not a recycled PID, waits until it is gone, and removes the machine's
// cgroups, which its supervisor, gone too, did not.
func killOrphan(st Status, c Config) error {
	if !isMachineInit(st.InitPID) {
		return nil
	}
	// Read before the kill: where the machine's cgroups are, whoever started it.
	initCgroup, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", st.InitPID))
	if err := syscall.Kill(st.InitPID, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return err
	}
	if !WaitGone(st.InitPID, killWait) {
		return fmt.Errorf("the machine's init (pid %d) still runs %s after SIGKILL", st.InitPID, killWait)
	}
	if c.Name == "" {
		return nil
	}
	hs, err := machineCgroupsOf(string(initCgroup), machineCgroupName(c.Name, c.Dir))
	if err != nil {
		return nil // the init was gone before its cgroups could be read: nothing known to remove
	}
	return removeCgroupTrees(hs)
}

// isMachineInit reports whether pid runs and is PID 1 of a PID namespace below this one.
func isMachineInit(pid int) bool {
	if !Alive(pid) {
		return false
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "NSpid:" {
			return f[len(f)-1] == "1"
		}
	}
	return false
}

// killWait bounds how long a process may take to disappear after SIGKILL.
const killWait = 10 * time.Second

// Terminate ends pid: SIGTERM, SIGKILL once grace has passed, and returns once it is gone (an
// error if it still runs killWait after SIGKILL). A process already gone is not an error.
func Terminate(pid int, grace time.Duration) error {
	if !Alive(pid) {
		return nil // also never signal pid 0 or below: process groups
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && err != syscall.ESRCH {
		return err
	}
	if WaitGone(pid, grace) {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return err
	}
	if !WaitGone(pid, killWait) {
		return fmt.Errorf("pid %d still runs %s after SIGKILL", pid, killWait)
	}
	return nil
}

// WaitGone waits up to timeout for pid to end and reports whether it did.
func WaitGone(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for Alive(pid) {
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
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
