package bootimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	operatorv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/bootimage"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// The integration tests share one control plane, one running controller and the singleton
// MachineConfiguration `cluster`; each test sets the enrollment it needs and deletes its
// MachineSets when done, so counts in the conditions are its own.
var (
	k8sClient client.Client
	testOpts  = Options{
		MachineAPINamespace: "openshift-machine-api",
		BootImagesNamespace: "openshift-machine-config-operator",
		DefaultArchitecture: "amd64",
		StubSpecVersion:     bootimage.StubSpecVersion,
	}
)

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithManager(m, "boot image controller", func(env *testenv.Env, mgr ctrl.Manager) error {
		k8sClient = env.Client
		if err := seed(context.Background()); err != nil {
			return err
		}
		r := &Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("bootimage-test"), Options: testOpts}
		return r.SetupWithManager(mgr)
	}))
}

// seed creates the namespaces, the golden ConfigMap, the user-data Secret most MachineSets use
// and MachineConfiguration `cluster` opting nothing in.
func seed(ctx context.Context) error {
	streamJSON, err := os.ReadFile(filepath.Join("..", "..", "bootimage", "testdata", "stream-4.16.json"))
	if err != nil {
		return err
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testOpts.MachineAPINamespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testOpts.BootImagesNamespace}},
		streamConfigMap(string(streamJSON)),
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: testOpts.MachineAPINamespace, Name: "worker-user-data"},
			Data:       map[string][]byte{protocol.UserDataKey: []byte(`{"ignition":{"version":"3.2.0","config":{"merge":[{"source":"https://api-int.test:22623/config/worker"}]}}}`)},
		},
		machineConfiguration(protocol.ClusterMachineConfiguration, []operatorv1.MachineManager{}),
	}
	for _, o := range objs {
		if err := k8sClient.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

func streamConfigMap(streamJSON string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: testOpts.BootImagesNamespace, Name: bootimage.BootImagesConfigMap},
		Data:       map[string]string{bootimage.StreamKey: streamJSON, bootimage.ReleaseVersionKey: "4.16.0"},
	}
}
