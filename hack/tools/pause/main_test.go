package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runAsPause makes the test binary the pause program, so TestSandbox runs main itself as PID 1
// of a new PID namespace.
const runAsPause = "PAUSE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsPause) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// TestReap: three children exited, none waited for, are three zombies; one reap takes them all
// (one SIGCHLD may stand for many), and with no child left it returns at once.
func TestReap(t *testing.T) {
	var pids []int
	for range 3 {
		cmd := exec.Command("true")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, cmd.Process.Pid)
	}
	for _, pid := range pids {
		waitFor(t, "child "+strconv.Itoa(pid)+" to exit", func() bool { return state(pid) == "Z" })
	}
	if n := reap(); n != 3 {
		t.Fatalf("reap took %d children, want 3", n)
	}
	for _, pid := range pids {
		if s := state(pid); s != "" {
			t.Errorf("child %d still there after reap, state %s", pid, s)
		}
	}
	if n := reap(); n != 0 {
		t.Errorf("reap with no children: %d", n)
	}
}

// TestSandbox runs pause as a pod sandbox runs it, PID 1 of its own PID namespace: a process
// orphaned inside the namespace is handed to it and reaped when it exits, and SIGTERM and
// SIGINT each end it with status 0.
func TestSandbox(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("a PID namespace needs root: run the tests as root")
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd := exec.Command(self, "-test.run=^$")
			cmd.Env = append(os.Environ(), runAsPause+"=1")
			cmd.Stderr = &stderr
			cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			defer cmd.Process.Kill()
			pause := cmd.Process.Pid

			// A shell entered into the namespace starts sleep and exits: sleep's parent is gone,
			// so the kernel hands it to the namespace's PID 1. (sleep must not hold the output
			// pipe, or CombinedOutput would wait for it to end.)
			orphan := exec.Command("nsenter", "-t", strconv.Itoa(pause), "-p", "--", "sh", "-c", "sleep 1 </dev/null >/dev/null 2>&1 & exit 0")
			if out, err := orphan.CombinedOutput(); err != nil {
				t.Fatalf("nsenter: %v\n%s", err, out)
			}
			waitFor(t, "the orphan to be handed to pause", func() bool { return len(childrenOf(pause)) > 0 })
			waitFor(t, "pause to reap its exited child", func() bool { return len(childrenOf(pause)) == 0 })

			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("pause after %s: %v (want exit 0)\n%s", sig, err, &stderr)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("pause still running 5 s after %s", sig)
			}
			if got := stderr.String(); !strings.Contains(got, "shutting down, got signal") || strings.Contains(got, "warning") {
				t.Errorf("stderr %q", got)
			}
		})
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stat is /proc/<pid>/stat after the command name, which may hold spaces: state, ppid, ...
func stat(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	_, rest, ok := strings.Cut(string(data), ") ")
	if !ok {
		return nil
	}
	return strings.Fields(rest)
}

// state is the process's state letter (Z for a zombie), or "" when it is gone.
func state(pid int) string {
	if f := stat("/proc/" + strconv.Itoa(pid) + "/stat"); len(f) > 0 {
		return f[0]
	}
	return ""
}

// childrenOf maps every process whose parent is pid to its state.
func childrenOf(pid int) map[string]string {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	children := map[string]string{}
	for _, p := range paths {
		if f := stat(p); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			children[filepath.Base(filepath.Dir(p))] = f[0]
		}
	}
	return children
}
