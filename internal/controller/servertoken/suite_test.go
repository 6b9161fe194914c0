package servertoken

import (
	"os"
	"sync"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/controller/userdata"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/servertoken"
	"github.com/mco-dev/mco/internal/testenv"
)

var (
	k8sClient client.Client
	clock     = &testClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	policy    = servertoken.Policy{Lifetime: 30 * 24 * time.Hour, Overlap: 24 * time.Hour}
	testOpts  = Options{Namespace: "openshift-machine-config-operator", Policy: policy}
	// The user-data controller runs beside it, as in `mco controller`, to show the pointer
	// configs follow the tokens.
	userDataOpts = userdata.Options{
		MachineAPINamespace: "openshift-machine-api",
		ServerNamespace:     testOpts.Namespace,
		ServerHost:          "api-int.test.example",
		CA:                  userdata.CASource{Kind: "configmap", Namespace: testOpts.Namespace, Name: "machine-config-server-ca", Key: "ca-bundle.crt"},
		SpecVersion:         ignition.V3_4,
	}
)

// testClock is the controller's injected clock: tests move it past a rotation instead of
// waiting 29 days.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithManager(m, "server token controller", func(env *testenv.Env, mgr ctrl.Manager) error {
		k8sClient = env.Client
		tokens := &Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("servertoken-test"), Options: testOpts, Now: clock.Now}
		if err := tokens.SetupWithManager(mgr); err != nil {
			return err
		}
		return (&userdata.ManagedReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("userdata-test"), Options: userDataOpts}).SetupWithManager(mgr)
	}))
}
