package render

import (
	"os"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/testenv"
)

// The integration tests share one control plane and one running render controller.
var (
	k8sClient client.Client
	env       *testenv.Env
)

const testKeepRendered = 2

// testSettle is shorter than `mco controller`'s default, so tests wait less, but long enough
// that creating a handful of MachineConfigs one after the other stays inside one window.
var testSettle = Settle{Quiet: 500 * time.Millisecond, Max: 3 * time.Second}

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithManager(m, "render controller", func(e *testenv.Env, mgr ctrl.Manager) error {
		env, k8sClient = e, e.Client
		r := &Reconciler{
			Client:   mgr.GetClient(),
			Recorder: mgr.GetEventRecorderFor("render-test"),
			Options: Options{
				ControllerVersion: "test-version",
				KeepRendered:      testKeepRendered,
				Defaults:          render.Defaults{OSImageURL: "quay.io/example/os@sha256:default"},
				Settle:            testSettle,
			},
		}
		return r.SetupWithManager(mgr)
	}))
}
