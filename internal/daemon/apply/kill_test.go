//go:build failpoints

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
// Every kill is a failpoint.KillAtEnv, so the file builds only with the failpoints tag (make
// test and make unit pass it); without it there would be nothing to kill at.
const childEnv = "MCO_APPLY_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "apply":
		os.Exit(childApply())
	case "recover":
		os.Exit(childRecover())
	case "hazard":
		os.Exit(childHazard())
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
func runChild(t *testing.T, mode, root string, killAt int, env ...string) (killed bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, "ROOT="+root, failpoint.KillAtEnv+"="+strconv.Itoa(killAt))
	cmd.Env = append(cmd.Env, env...)
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
		recoverKilledAtEveryStep(t, root)
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

// recoverKilledAtEveryStep restarts the agent after a kill, and kills its recovery at the
// first step, then the restarted one at the second, and so on until one finishes: every step
// of a rollback is interrupted once, on top of all the interrupted attempts before it.
func recoverKilledAtEveryStep(t *testing.T, root string) (steps int) {
	t.Helper()
	for runChild(t, "recover", root, steps+1) {
		steps++
	}
	return steps
}

// childHazard runs the transaction of hazard $HAZARD on the prepared root in $ROOT: it must
// fail and roll back.
func childHazard() int {
	err, undoErr := runHazard(&panicTB{}, os.Getenv("ROOT"), hazardByName(os.Getenv("HAZARD")), false, nil)
	if err == nil || undoErr != nil {
		fmt.Fprintf(os.Stderr, "transaction error %v, rollback error %v\n", err, undoErr)
		return 1
	}
	return 0
}

// TestKillHazards kills a transaction that fails on a hazard at every step of its Apply and of
// its rollback, then its recovery at the first step: the root always ends exactly as the
// transaction found it, with no journal, and the next transaction goes through.
func TestKillHazards(t *testing.T) {
	for _, h := range hazards() {
		if h.refused || h.later {
			continue
		}
		t.Run(h.name, func(t *testing.T) {
			recoverySteps := 0
			for n := 1; ; n++ {
				root := hazardRoot(t, h)
				before := snapshot(t, root)
				killed := runChild(t, "hazard", root, n, "HAZARD="+h.name)
				if killed {
					// Killed once more in recovery (TestKillAtEveryStep kills every recovery
					// step; here that would multiply the child runs by the steps).
					if runChild(t, "recover", root, 1) {
						recoverySteps++
					}
					if runChild(t, "recover", root, 0) {
						t.Fatal("recover killed without a kill point")
					}
				}
				if h.settle != nil {
					h.settle(t, root)
				}
				checkUndone(t, root, before)
				checkNextTransaction(t, root)
				if t.Failed() {
					t.Fatalf("killed at step %d", n)
				}
				if !killed {
					if n < 10 {
						t.Fatalf("only %d kill points", n-1)
					}
					t.Logf("killed at each of %d steps, recovery killed %d times", n-1, recoverySteps)
					return
				}
			}
		})
	}
}
