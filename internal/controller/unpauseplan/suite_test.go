package unpauseplan

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	nodecontroller "github.com/mco-dev/mco/internal/controller/node"
	"github.com/mco-dev/mco/internal/dev/nodesim"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/testenv"
)

// The integration tests run this controller next to the real node controller, which writes the
// rest of the pool's status from a copy that must keep this controller's condition, and a
// simulated agent (its own manager) moving nodes once the pool is unpaused.
var (
	env       *testenv.Env
	k8sClient client.Client
	// statusPatches counts this controller's pool status patches, to show it does not write
	// when nothing changed.
	statusPatches atomic.Int64
)

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithControlPlane(m, "unpause plan controller", func(e *testenv.Env) (func(), error) {
		env, k8sClient = e, e.Client
		ctx, cancel := context.WithCancel(context.Background())
		if err := startControllers(ctx); err != nil {
			cancel()
			return nil, err
		}
		return cancel, nil
	}))
}

func startControllers(ctx context.Context) error {
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return err
	}
	if err := (&Reconciler{Client: countingClient{mgr.GetClient()}}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&nodecontroller.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("node-test")}).SetupWithManager(mgr); err != nil {
		return err
	}
	agentMgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptrTo(true)}})
	if err != nil {
		return err
	}
	if err := (&nodesim.Agent{Client: agentMgr.GetClient()}).SetupWithManager(agentMgr, "nodesim-agent"); err != nil {
		return err
	}
	for _, m := range []ctrl.Manager{mgr, agentMgr} {
		go func() {
			if err := m.Start(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "manager:", err)
			}
		}()
	}
	return nil
}

// countingClient counts status patches.
type countingClient struct{ client.Client }

func (c countingClient) Status() client.SubResourceWriter { return countingStatus{c.Client.Status()} }

type countingStatus struct{ client.SubResourceWriter }

func (s countingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	statusPatches.Add(1)
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

func ptrTo[T any](v T) *T { return &v }
