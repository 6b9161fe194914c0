package images

import (
	"os"
	"testing"

	"github.com/mco-dev/mco/test/clustertest"
)

// TestMain holds the dev-cluster lock of the package's network slot for its whole run
// (clustertest.Main): the other suites' clusters run beside it on their own slots.
func TestMain(m *testing.M) { os.Exit(clustertest.Main(m, clustertest.ImagesSlot)) }
