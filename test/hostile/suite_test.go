package hostile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	operatorv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mco-dev/mco/internal/bootimage"
	bootimagecontroller "github.com/mco-dev/mco/internal/controller/bootimage"
	rendercontroller "github.com/mco-dev/mco/internal/controller/render"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// k8s is the suite's client of the real API server; the render and boot image controllers run
// against it for the cases marked integration.
var k8s client.Client

// cached reads what the controllers see: the manager's informer cache.
var cached client.Reader

var bootImageOpts = bootimagecontroller.Options{
	MachineAPINamespace: "openshift-machine-api",
	BootImagesNamespace: "openshift-machine-config-operator",
	DefaultArchitecture: "amd64",
	StubSpecVersion:     bootimage.StubSpecVersion,
}

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	os.Exit(testenv.RunWithManager(m, "hostile input", func(env *testenv.Env, mgr ctrl.Manager) error {
		k8s, cached = env.Client, mgr.GetCache()
		if err := seed(context.Background()); err != nil {
			return err
		}
		r := &rendercontroller.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("hostile"),
			Options: rendercontroller.Options{ControllerVersion: "hostile", KeepRendered: 2}}
		if err := r.SetupWithManager(mgr); err != nil {
			return err
		}
		b := &bootimagecontroller.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("hostile"), Options: bootImageOpts}
		return b.SetupWithManager(mgr)
	}))
}

// seed creates what the boot image controller reads: its namespaces, the golden stream, the
// user data most MachineSets name, and MachineConfiguration cluster enrolling every MachineSet
// (machineManagers absent means all).
func seed(ctx context.Context) error {
	stream, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "internal", "bootimage", "testdata", "stream-4.16.json"))
	if err != nil {
		return err
	}
	goodStream = string(stream)
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: bootImageOpts.MachineAPINamespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: bootImageOpts.BootImagesNamespace}},
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: bootImageOpts.BootImagesNamespace, Name: bootimage.BootImagesConfigMap},
			Data:       map[string]string{bootimage.StreamKey: goodStream, bootimage.ReleaseVersionKey: "4.16.0"},
		},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: bootImageOpts.MachineAPINamespace, Name: "worker-user-data"},
			Data:       map[string][]byte{protocol.UserDataKey: []byte(`{"ignition":{"version":"3.2.0","config":{"merge":[{"source":"https://api-int.test:22623/config/worker"}]}}}`)},
		},
		// Unstructured: the typed object serialises empty required sub-structs the CRD refuses.
		&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": operatorv1.GroupVersion.String(), "kind": "MachineConfiguration",
			"metadata": map[string]any{"name": protocol.ClusterMachineConfiguration},
			"spec":     map[string]any{"managementState": string(operatorv1.Managed)},
		}},
	}
	for _, o := range objs {
		if err := k8s.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// goodStream is the stream metadata the ConfigMap holds when no case has broken it.
var goodStream string
