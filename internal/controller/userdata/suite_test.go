package userdata

import (
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/ignition"
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
	os.Exit(testenv.RunWithManager(m, "user-data controller", func(env *testenv.Env, mgr ctrl.Manager) error {
		k8sClient = env.Client
		recorder := mgr.GetEventRecorderFor("userdata-test")
		if err := (&ManagedReconciler{Client: mgr.GetClient(), Recorder: recorder, Options: testOpts}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&InstallerReconciler{Client: mgr.GetClient(), Recorder: recorder, Options: testOpts}).SetupWithManager(mgr)
	}))
}
