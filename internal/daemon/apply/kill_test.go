package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mco-dev/mco/internal/daemon/failpoint"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/systemd"
)

// The kill tests re-execute this test binary as the "agent": childEnv selects what it does.
const childEnv = "MCO_APPLY_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "apply":
		os.Exit(childApply())
	case "recover":
		os.Exit(childRecover())
	}
	os.Exit(2)
}

// childApply moves the root in $ROOT from configA to configB, as an agent would.
func childApply() int {
	a, b := mustSet(configA), mustSet(configB)
	if err := runTransition(context.Background(), os.Getenv("ROOT"), Request{From: "a", To: "b", Old: a, New: b, Record: record("b")}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func childRecover() int {
	r, err := noderoot.Open(os.Getenv("ROOT"))
	if err == nil {
		_, err = (&Applier{Root: r, Systemd: systemd.New(os.Getenv("ROOT"))}).Recover(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func mustSet(ign string) (s setT) {
	t := &panicTB{}
	return setOf(t, ign)
}

// runChild runs the test binary in a child mode and reports whether SIGKILL ended it.
func runChild(t *testing.T, mode, root string, killAt int) (killed bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, "ROOT="+root, failpoint.KillAtEnv+"="+strconv.Itoa(killAt))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true
		}
	}
	if err != nil {
		t.Fatalf("%s child (kill at %d): %v: %s", mode, killAt, err, out)
	}
	return false
}

// TestKillAtEveryStep kills the applying process at every step (journal, each write, units,
// sync, commit, journal removal), restarts it (once more killed in its recovery when there is
// one), and checks the root is exactly in the old or the new config.
func TestKillAtEveryStep(t *testing.T) {
	requireSystemctl(t)
	template := newNodeRoot(t)
	transition(t, template, Request{To: "a", New: setOf(t, configA), Record: record("a")})
	oldTree := snapshot(t, template)
	done := t.TempDir()
	copyTree(t, template, done)
	if runChild(t, "apply", done, 0) {
		t.Fatal("child killed without a kill point")
	}
	newTree := snapshot(t, done)

	sawOld, sawNew := 0, 0
	for n := 1; ; n++ {
		root := t.TempDir()
		copyTree(t, template, root)
		if !runChild(t, "apply", root, n) {
			if n < 5 {
				t.Fatalf("only %d kill points: the failpoints are not wired", n-1)
			}
			t.Logf("killed at each of %d steps; root ended in the old config %d times, in the new %d times", n-1, sawOld, sawNew)
			break
		}
		// The restarted agent may itself be killed in its first recovery step.
		runChild(t, "recover", root, 1)
		if runChild(t, "recover", root, 0) {
			t.Fatal("recover killed without a kill point")
		}
		got := snapshot(t, root)
		switch {
		case len(diffSnapshots(got, oldTree)) == 0:
			sawOld++
		case len(diffSnapshots(got, newTree)) == 0:
			sawNew++
		default:
			t.Fatalf("killed at step %d: root is in neither config.\nvs old:\n%s\nvs new:\n%s", n,
				strings.Join(diffSnapshots(got, oldTree), "\n"), strings.Join(diffSnapshots(got, newTree), "\n"))
		}
	}
	if sawOld == 0 || sawNew == 0 {
		t.Errorf("expected both outcomes across the kill points (old %d, new %d)", sawOld, sawNew)
	}
}
