package generated

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/testenv"
)

// One control plane for the package; the Writer is called directly, no controller runs.
var k8sClient client.Client

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithControlPlane(m, "generated MachineConfig writer", func(env *testenv.Env) (func(), error) {
		k8sClient = env.Client
		return nil, nil
	}))
}
