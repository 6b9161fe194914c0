package clusteroperator

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/mco-dev/mco/internal/operatorstatus"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/testenv"
)

// The integration tests share one control plane playing OpenShift (the ClusterOperator CRD
// from github.com/openshift/api installed), one running controller and so the one
// ClusterOperator; each test creates the pools it needs and deletes them when done.
var (
	k8sClient client.Client
	testOpts  = Options{Namespace: "openshift-machine-config-operator", Version: "4.0.2", ControllerVersion: "commit-2"}
)

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithControlPlane(m, "ClusterOperator controller", func(env *testenv.Env) (func(), error) {
		k8sClient = env.Client
		if err := testenv.InstallOpenShiftCRDs(env.Config, testenv.ClusterOperatorCRD); err != nil {
			return nil, err
		}
		obj, by := CacheByObject()
		mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
			Scheme:  scheme.Scheme,
			Metrics: metricsserver.Options{BindAddress: "0"},
			Cache:   cache.Options{ByObject: map[client.Object]cache.ByObject{obj: by}},
		})
		if err != nil {
			return nil, err
		}
		served, err := Served(mgr.GetRESTMapper())
		if err != nil || !served {
			return nil, fmt.Errorf("ClusterOperator CRD installed, but Served = %v, %v", served, err)
		}
		r := &Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("clusteroperator-test"), Options: testOpts}
		if err := r.SetupWithManager(mgr); err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			if err := mgr.Start(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "manager:", err)
			}
		}()
		return cancel, nil
	}))
}

// waitOperator polls ClusterOperator machine-config until cond holds and returns it.
func waitOperator(t *testing.T, ctx context.Context, what string, cond func(*configv1.ClusterOperator) bool) *configv1.ClusterOperator {
	t.Helper()
	var co configv1.ClusterOperator
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: operatorstatus.Name}, &co); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cond(&co), nil
	})
	if err != nil {
		t.Fatalf("ClusterOperator never %s: %v; versions %v, conditions %+v, extension %s", what, err,
			co.Status.Versions, co.Status.Conditions, co.Status.Extension.Raw)
	}
	return &co
}

func condition(co *configv1.ClusterOperator, t configv1.ClusterStatusConditionType) configv1.ClusterOperatorStatusCondition {
	for _, c := range co.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return configv1.ClusterOperatorStatusCondition{}
}

func is(co *configv1.ClusterOperator, t configv1.ClusterStatusConditionType, s configv1.ConditionStatus) bool {
	return condition(co, t).Status == s
}

func reportedVersion(co *configv1.ClusterOperator) string {
	for _, v := range co.Status.Versions {
		if v.Name == operatorstatus.OperatorVersionName {
			return v.Version
		}
	}
	return ""
}

// createPool creates a pool targeting config and reports it Updated there with its nodes, as
// the render and node controllers (not running here) would have.
func createPool(t *testing.T, ctx context.Context, name, config string, required bool, sources ...string) {
	t.Helper()
	p := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if required {
		p.Labels = map[string]string{protocol.RequiredForUpgradeLabel: ""}
	}
	p.Spec.MachineConfigSelector = &metav1.LabelSelector{MatchLabels: map[string]string{protocol.RoleLabel: name}}
	p.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/" + name: ""}}
	p.Spec.Configuration.Name = config
	for _, s := range sources {
		p.Spec.Configuration.Source = append(p.Spec.Configuration.Source, corev1.ObjectReference{Kind: "MachineConfig", Name: s})
	}
	if err := k8sClient.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAndWait(t, p) })
	editPoolStatus(t, ctx, name, updatedOn(config))
}

// editPoolStatus rewrites the pool's status with edit, as the node controller would.
func editPoolStatus(t *testing.T, ctx context.Context, name string, edit func(*mcfgv1.MachineConfigPool)) {
	t.Helper()
	p := &mcfgv1.MachineConfigPool{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
		t.Fatal(err)
	}
	edit(p)
	if err := k8sClient.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
}

// updatedOn: all 3 nodes on config, which is now also the target.
func updatedOn(config string) func(*mcfgv1.MachineConfigPool) {
	return func(p *mcfgv1.MachineConfigPool) {
		now := metav1.Now()
		p.Spec.Configuration.Name = config // for status.configuration's sources below
		p.Status.ObservedGeneration = p.Generation
		p.Status.Configuration = p.Spec.Configuration
		p.Status.MachineCount, p.Status.UpdatedMachineCount, p.Status.ReadyMachineCount = 3, 3, 3
		p.Status.UnavailableMachineCount, p.Status.DegradedMachineCount = 0, 0
		poolcondition.Set(&p.Status, mcfgv1.MachineConfigPoolUpdated, corev1.ConditionTrue, "", "All nodes are updated with MachineConfig "+config, now)
		poolcondition.Set(&p.Status, mcfgv1.MachineConfigPoolUpdating, corev1.ConditionFalse, "", "", now)
		poolcondition.Set(&p.Status, mcfgv1.MachineConfigPoolNodeDegraded, corev1.ConditionFalse, "", "", now)
		poolcondition.SetDegraded(&p.Status, now)
	}
}

// machineConfig creates a MachineConfig stamped by controllerVersion ("" for an admin's).
func machineConfig(t *testing.T, ctx context.Context, name, controllerVersion string) {
	t.Helper()
	mc := &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if controllerVersion != "" {
		mc.Annotations = map[string]string{protocol.GeneratedByControllerVersionAnnotation: controllerVersion}
	}
	mc.Spec.Config.Raw = []byte(`{"ignition":{"version":"3.4.0"}}`)
	if err := k8sClient.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAndWait(t, mc) })
}

func deleteAndWait(t *testing.T, obj client.Object) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := k8sClient.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
		return
	}
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Errorf("%s not deleted: %v", obj.GetName(), err)
	}
}
