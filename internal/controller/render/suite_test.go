package render

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/testenv"
)

// The integration tests share one control plane and one running render controller.
var (
	env       *testenv.Env
	k8sClient client.Client
)

const testKeepRendered = 2

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("render controller integration tests need a control plane; skipped by -short")
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
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r := &Reconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorderFor("render-test"),
		Options: Options{
			ControllerVersion: "test-version",
			KeepRendered:      testKeepRendered,
			Defaults:          render.Defaults{OSImageURL: "quay.io/example/os@sha256:default"},
		},
	}
	if err := r.SetupWithManager(mgr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	k8sClient = env.Client
	return m.Run()
}
