package clustertest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// packageHoldsLock is set by Main: the test process holds its network slot's lock for its
// whole run; networkSlot is that slot, on which every cluster of the package runs.
var (
	packageHoldsLock bool
	networkSlot      int
)

// Network slots of the cluster suites: each runs its clusters on a dev network of its own
// (devnet.Slot), so they run side by side under `make test`, each package's clusters one after
// the other. test/e2e has slot 0, the one README's commands and their shown output name (its
// doctests check them); test/chaos slot 1, test/e2e/stranded slot 2, test/e2e/images slot 4.
const (
	E2ESlot      = 0
	ChaosSlot    = 1
	StrandedSlot = 2
	// SoakSlot is make soak's (test/soak), beside make test's four.
	SoakSlot   = 3
	ImagesSlot = 4
)

// Main runs a package's tests holding the dev-cluster lock of its network slot for the whole
// run: the wait for another package's clusters on that slot comes before any test starts its
// clock. Waited for inside a test, it was counted against that test's deadline, which then
// expired during its own `mco dev up` ("kube-apiserver not ready", "context deadline exceeded"
// in the e2e suite). In -short mode no test makes a cluster, and nothing is locked. Use it as
// `func TestMain(m *testing.M) { os.Exit(clustertest.Main(m, clustertest.E2ESlot)) }`.
func Main(m *testing.M, slot int) int {
	flag.Parse()
	networkSlot = slot
	if !testing.Short() {
		f, waited, err := acquireLock()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer f.Close()
		if waited > time.Second {
			fmt.Printf("waited %s for another package's dev clusters (%s)\n", waited.Round(time.Second), LockFile(networkSlot))
		}
		packageHoldsLock = true
	}
	return m.Run()
}

// LockFile serialises the dev clusters of tests on network slot n across test processes:
// clusters on one slot would share its bridges and addresses.
func LockFile(n int) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("mco-dev-cluster-tests-%d.lock", n))
}

// lockCluster holds the dev-cluster lock of the package's slot until the test ends, unless the
// package's Main holds it already.
func lockCluster(t testing.TB) {
	t.Helper()
	if packageHoldsLock {
		return
	}
	f, waited, err := acquireLock()
	if err != nil {
		t.Fatal(err)
	}
	if waited > time.Second {
		t.Logf("waited %s for another test's dev cluster (%s)", waited.Round(time.Second), LockFile(networkSlot))
	}
	t.Cleanup(func() { f.Close() }) // registered first, so it runs after the cluster is down
}

// acquireLock waits for the slot's lock file's exclusive lock, held until the returned file is
// closed.
func acquireLock() (*os.File, time.Duration, error) {
	path := LockFile(networkSlot)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, 0, err
	}
	began := time.Now()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, time.Since(began), nil
}
