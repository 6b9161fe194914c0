package userdata

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/testenv"
)

var (
	k8sClient client.Client
	testOpts  = Options{
		MachineAPINamespace: "openshift-machine-api",
		ServerNamespace:     "openshift-machine-config-operator",
		ServerHost:          "api-int.test.example",
		CA:                  CASource{Kind: "configmap", Namespace: "openshift-machine-config-operator", Name: "machine-config-server-ca", Key: "ca-bundle.crt"},
		SpecVersion:         ignition.V3_4,
	}
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("user-data controller integration tests need a control plane; skipped by -short")
		os.Exit(0)
	}
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	env, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	recorder := mgr.GetEventRecorderFor("userdata-test")
	if err := (&ManagedReconciler{Client: mgr.GetClient(), Recorder: recorder, Options: testOpts}).SetupWithManager(mgr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := (&InstallerReconciler{Client: mgr.GetClient(), Recorder: recorder, Options: testOpts}).SetupWithManager(mgr); err != nil {
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
