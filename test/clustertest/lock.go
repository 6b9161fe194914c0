package clustertest

import (
	"flag"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"
)

// packageHoldsLock is set by Main: the test process holds LockFile for its whole run.
var packageHoldsLock bool

// Main runs a package's tests holding the host's dev-cluster lock for the whole run: the wait
// for another package's clusters (test/chaos's take 8 min) comes before any test starts its
// clock. Waited for inside a test, it was counted against that test's deadline, which then
// expired during its own `mco dev up` ("kube-apiserver not ready", "context deadline exceeded"
// in the e2e suite). In -short mode no test makes a cluster, and nothing is locked. Use it as
// `func TestMain(m *testing.M) { os.Exit(clustertest.Main(m)) }`.
func Main(m *testing.M) int {
	flag.Parse()
	if !testing.Short() {
		f, waited, err := acquireLock()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer f.Close()
		if waited > time.Second {
			fmt.Printf("waited %s for another package's dev clusters (%s)\n", waited.Round(time.Second), LockFile)
		}
		packageHoldsLock = true
	}
	return m.Run()
}

// lockCluster holds the host's dev-cluster lock until the test ends, unless the package's Main
// holds it already.
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
		t.Logf("waited %s for another test's dev cluster (%s)", waited.Round(time.Second), LockFile)
	}
	t.Cleanup(func() { f.Close() }) // registered first, so it runs after the cluster is down
}

// acquireLock waits for LockFile's exclusive lock, held until the returned file is closed.
func acquireLock() (*os.File, time.Duration, error) {
	f, err := os.OpenFile(LockFile, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, 0, err
	}
	began := time.Now()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("locking %s: %w", LockFile, err)
	}
	return f, time.Since(began), nil
}
