package daemon_test

import (
	"context"
	"flag"
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
	flag.Parse()
	if testing.Short() {
		fmt.Println("node agent integration tests need a control plane; skipped by -short")
		os.Exit(0)
	}
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	var err error
	if env, err = testenv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	mgr, err := controller.NewManager(env.Config, controller.Options{MetricsAddr: "0", ProbeAddr: "0"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(ctrl.LoggerInto(context.Background(), ctrl.Log))
	defer cancel()
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return m.Run()
}
