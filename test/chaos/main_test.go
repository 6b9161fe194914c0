package chaos

import (
	"os"
	"testing"

	"github.com/mco-dev/mco/test/clustertest"
)

// TestMain holds the host's dev-cluster lock for the package's whole run (clustertest.Main), so
// that waiting for the other suite's clusters counts against no test's deadline.
func TestMain(m *testing.M) { os.Exit(clustertest.Main(m)) }
