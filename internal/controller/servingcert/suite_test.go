package servingcert

import (
	"os"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/controller/userdata"
	"github.com/mco-dev/mco/internal/ignition"
	core "github.com/mco-dev/mco/internal/servingcert"
	"github.com/mco-dev/mco/internal/testenv"
)

const (
	serverNS = "openshift-machine-config-operator"
	mapiNS   = "openshift-machine-api"
)

var (
	k8sClient client.Client
	// testClock is the controller's time; tests move it forward.
	testClock = clocktesting.NewFakePassiveClock(time.Now())
	testNames = mustNames("api-int.test.example", "10.0.0.5")
	testOpts  = Options{
		Namespace: serverNS, Names: testNames, Policy: core.DefaultPolicy(), Clock: testClock,
		// Look again often, so a moved clock takes effect within the test's patience.
		MaxRecheck: 200 * time.Millisecond,
	}
)

func mustNames(list ...string) core.Names {
	n, err := core.ParseNames(list)
	if err != nil {
		panic(err)
	}
	return n
}

// TestMain runs this controller and the user-data controller reading the bundle it publishes,
// as `mco controller` does with --server-host and the default --server-ca.
func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithManager(m, "serving certificate controller", func(env *testenv.Env, mgr ctrl.Manager) error {
		k8sClient = env.Client
		if err := (&Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("servingcert-test"), Options: testOpts}).SetupWithManager(mgr); err != nil {
			return err
		}
		ud := userdata.Options{
			MachineAPINamespace: mapiNS, ServerNamespace: serverNS, ServerHost: "api-int.test.example",
			CA:          userdata.CASource{Kind: "configmap", Namespace: serverNS, Name: BundleName, Key: core.KeyBundle},
			SpecVersion: ignition.V3_4,
		}
		return (&userdata.ManagedReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("userdata-test"), Options: ud}).SetupWithManager(mgr)
	}))
}
