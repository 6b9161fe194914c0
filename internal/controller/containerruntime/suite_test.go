package containerruntime

import (
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/testenv"
)

// One control plane for the package, as plain Kubernetes.
var k8sClient client.Client

const testVersion = "test-version"

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithManager(m, "container runtime config controller", func(env *testenv.Env, mgr ctrl.Manager) error {
		k8sClient = env.Client
		return (&Reconciler{
			Client:   mgr.GetClient(),
			Reader:   mgr.GetAPIReader(),
			Recorder: mgr.GetEventRecorderFor("containerruntimeconfig-test"),
			Options:  Options{ControllerVersion: testVersion},
		}).SetupWithManager(mgr)
	}))
}
