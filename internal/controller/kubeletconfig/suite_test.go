package kubeletconfig

import (
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rendercontroller "github.com/mco-dev/mco/internal/controller/render"
	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/testenv"
)

// One control plane for the package, as plain Kubernetes: no config.openshift.io APIServer.
// The render controller runs beside this one, as in `mco controller`, to show generated
// MachineConfigs reach the pool's rendered config.
var k8sClient client.Client

const testVersion = "test-version"

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithManager(m, "kubelet config controller", func(env *testenv.Env, mgr ctrl.Manager) error {
		k8sClient = env.Client
		r := &Reconciler{
			Client:   mgr.GetClient(),
			Reader:   mgr.GetAPIReader(),
			Recorder: mgr.GetEventRecorderFor("kubeletconfig-test"),
			Options:  Options{ControllerVersion: testVersion},
		}
		if err := r.SetupWithManager(mgr); err != nil {
			return err
		}
		return (&rendercontroller.Reconciler{
			Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("render-test"),
			Options: rendercontroller.Options{ControllerVersion: testVersion, KeepRendered: 2, Defaults: render.Defaults{OSImageURL: "quay.io/example/os@sha256:default"}},
		}).SetupWithManager(mgr)
	}))
}
