package registries

import (
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/testenv"
)

// One control plane for the package, as plain Kubernetes: no ClusterVersion kind, so no release
// payload to protect.
var k8sClient client.Client

const testVersion = "test-version"

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithManager(m, "registries controller", func(env *testenv.Env, mgr ctrl.Manager) error {
		k8sClient = env.Client
		return (&Reconciler{
			Client:   mgr.GetClient(),
			Reader:   mgr.GetAPIReader(),
			Recorder: mgr.GetEventRecorderFor("registries-test"),
			Options:  Options{ControllerVersion: testVersion},
		}).SetupWithManager(mgr)
	}))
}
