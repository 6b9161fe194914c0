package daemon_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mco-dev/mco/internal/controller"
	"github.com/mco-dev/mco/internal/testenv"
)

// One control plane and one controller manager (render, node and drain controllers, as
// `mco controller` runs them) serve every agent test in this package.
var env *testenv.Env

func TestMain(m *testing.M) {
	// RunWithManager's bare manager would not be what `mco controller` runs: build the real one.
	os.Exit(testenv.RunWithControlPlane(m, "node agent", func(e *testenv.Env) (func(), error) {
		env = e
		// Every client built from env.Config from here on (controllers, agents) is counted.
		env.Config.Wrap(mcnWrites.wrap)
		mgr, err := controller.NewManager(env.Config, controller.Options{MetricsAddr: "0", ProbeAddr: "0"})
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(ctrl.LoggerInto(context.Background(), ctrl.Log))
		go func() {
			if err := mgr.Start(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "manager:", err)
			}
		}()
		return cancel, nil
	}))
}
