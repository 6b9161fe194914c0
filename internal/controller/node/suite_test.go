package node

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/mco-dev/mco/internal/controller/drain"
	pacingcontroller "github.com/mco-dev/mco/internal/controller/pacing"
	"github.com/mco-dev/mco/internal/dev/nodesim"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/testenv"
)

// The integration tests share one control plane, one manager running the node and drain
// controllers, and one simulated agent (in a manager of its own) answering for every node
// labelled nodesim.SimulatedLabel. Each test uses its own pool and node role label.
var (
	env       *testenv.Env
	k8sClient client.Client
	agent     *nodesim.Agent
)

// pacingClock is the pacing decisions' clock: tests step it through soaks and windows. It
// starts on a Saturday, 14:00 UTC.
var pacingClock = clocktesting.NewFakePassiveClock(time.Date(2026, 6, 13, 14, 0, 0, 0, time.UTC))

// testDrainThreshold is short so the blocked-drain report shows up within a test.
const testDrainThreshold = 2 * time.Second

// testNotReadyThreshold is short so an unresponsive node is reported within a test.
const testNotReadyThreshold = 3 * time.Second

// testStallThreshold is short so a stalled node is reported within a test; far longer than a
// simulated agent takes to move a node on.
const testStallThreshold = 6 * time.Second

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithControlPlane(m, "node controller", func(e *testenv.Env) (func(), error) {
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
	kube, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return err
	}
	// Pacing is on for every test: pools without a policy must roll out exactly as without it.
	if err := (&Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("node-test"), Clock: pacingClock,
		Options: Options{NotReadyThreshold: testNotReadyThreshold, StallThreshold: testStallThreshold, Pacing: true}}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&pacingcontroller.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return err
	}
	drainer := &drain.Reconciler{Client: mgr.GetClient(), Kube: kube, Recorder: mgr.GetEventRecorderFor("drain-test"),
		Options: drain.Options{BlockedThreshold: testDrainThreshold, Pacing: true}}
	if err := drainer.SetupWithManager(mgr); err != nil {
		return err
	}
	agentMgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptrTo(true)}})
	if err != nil {
		return err
	}
	agent = &nodesim.Agent{Client: agentMgr.GetClient(), Drain: true}
	if err := agent.SetupWithManager(agentMgr, "nodesim-agent"); err != nil {
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

func ptrTo[T any](v T) *T { return &v }
