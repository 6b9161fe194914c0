package e2e

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/mco-dev/mco/test/clustertest"
)

// TestMain holds the dev-cluster lock of the package's network slot for its whole run
// (clustertest.Main): the other suite's clusters run beside it on their own slot, and waiting
// for another run of this one counts against no test's deadline.
// Before that, the upgrade test's image starts building.
func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	flag.Parse()
	if !testing.Short() {
		dir, err := os.MkdirTemp("", "mco-e2e-upgrade-image-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		startUpgradeImage(dir, flag.Lookup("test.run").Value.String())
	}
	return clustertest.Main(m, clustertest.E2ESlot)
}
