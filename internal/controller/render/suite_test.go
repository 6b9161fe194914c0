package render

import (
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/testenv"
)

// The integration tests share one control plane and one running render controller.
var k8sClient client.Client

const testKeepRendered = 2

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithManager(m, "render controller", func(env *testenv.Env, mgr ctrl.Manager) error {
		k8sClient = env.Client
		r := &Reconciler{
			Client:   mgr.GetClient(),
			Recorder: mgr.GetEventRecorderFor("render-test"),
			Options: Options{
				ControllerVersion: "test-version",
				KeepRendered:      testKeepRendered,
				Defaults:          render.Defaults{OSImageURL: "quay.io/example/os@sha256:default"},
			},
		}
		return r.SetupWithManager(mgr)
	}))
}
