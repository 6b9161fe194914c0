package testenv

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/mco-dev/mco/internal/scheme"
)

// RunWithManager is a package's TestMain for integration suites: one control plane for the whole
// package, a manager on which setup registers the controllers under test, started before the
// tests run. Under -short only the package's pure tests run (see Integration):
//
//	func TestMain(m *testing.M) { os.Exit(testenv.RunWithManager(m, "drain controller", setup)) }
func RunWithManager(m *testing.M, what string, setup func(*Env, ctrl.Manager) error) int {
	return RunWithControlPlane(m, what, func(env *Env) (func(), error) {
		mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
		if err != nil {
			return nil, err
		}
		if err := setup(env, mgr); err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			if err := mgr.Start(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "manager:", err)
			}
		}()
		return cancel, nil
	})
}

// RunWithControlPlane is RunWithManager for suites that start their own components: setup gets
// the running control plane and returns what to stop after the tests.
func RunWithControlPlane(m *testing.M, what string, setup func(*Env) (func(), error)) int {
	flag.Parse()
	if testing.Short() {
		// The package's pure tests still run; Integration skips the rest.
		return m.Run()
	}
	env, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping control plane:", err)
		}
	}()
	stop, err := setup(env)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s suite setup: %v\n", what, err)
		return 1
	}
	if stop != nil {
		defer stop()
	}
	controlPlaneUp = true
	return m.Run()
}

// controlPlaneUp is set once RunWithControlPlane started the suite's control plane.
var controlPlaneUp bool

// Integration marks a test that needs the suite's control plane. Under -short (`make unit`)
// RunWithControlPlane starts none, runs the package's pure tests and this skips the others; in
// `make test` the control plane always starts or the suite fails.
func Integration(t testing.TB) {
	t.Helper()
	if !controlPlaneUp {
		t.Skip("integration test: needs the control plane, which -short does not start")
	}
}
