package stranded

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/mco-dev/mco/test/clustertest"
)

// TestMain holds the dev-cluster lock of the package's network slot for its whole run
// (clustertest.Main): test/e2e's and test/chaos's clusters run beside it on their own slots.
// Before that, the upgrade test's image starts building, while the tests before it run.
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
	return clustertest.Main(m, clustertest.StrandedSlot)
}
