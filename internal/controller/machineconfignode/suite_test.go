package machineconfignode

import (
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mco-dev/mco/internal/testenv"
)

// The integration tests share one control plane and one running controller; they play the
// node controller and the agent by writing annotations and status themselves. There is no
// garbage collector in envtest, so every deletion seen here is the controller's own.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithManager(m, "machineconfignode controller", func(e *testenv.Env, mgr ctrl.Manager) error {
		env = e
		return (&Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("machineconfignode-test")}).SetupWithManager(mgr)
	}))
}
