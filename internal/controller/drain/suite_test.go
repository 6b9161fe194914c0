package drain

import (
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/testenv"
)

// The integration tests share one control plane and one running drain controller; the tests
// play the agent by writing desiredDrain themselves.
var k8sClient client.Client

const testThreshold = 2 * time.Second

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithManager(m, "drain controller", func(env *testenv.Env, mgr ctrl.Manager) error {
		kube, err := kubernetes.NewForConfig(env.Config)
		if err != nil {
			return err
		}
		k8sClient = env.Client
		r := &Reconciler{Client: mgr.GetClient(), Kube: kube, Recorder: mgr.GetEventRecorderFor("drain-test"), Options: Options{BlockedThreshold: testThreshold}}
		return r.SetupWithManager(mgr)
	}))
}
