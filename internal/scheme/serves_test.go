package scheme

import (
	"context"
	"errors"
	"testing"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

func TestServes(t *testing.T) {
	machineSet := machinev1beta1.GroupVersion.WithKind("MachineSet")
	empty := meta.NewDefaultRESTMapper(nil)
	if ok, err := Serves(empty, machineSet); ok || err != nil {
		t.Errorf("no MachineSet kind: got %v, %v; want false, nil", ok, err)
	}
	served := meta.NewDefaultRESTMapper(nil)
	served.Add(machineSet, meta.RESTScopeNamespace)
	if ok, err := Serves(served, machineSet); !ok || err != nil {
		t.Errorf("MachineSet kind mapped: got %v, %v; want true, nil", ok, err)
	}
}

// A kind the cluster does not serve lists as none, served false; any other error is returned.
func TestListServed(t *testing.T) {
	notServed := fake.NewClientBuilder().WithScheme(Scheme).WithInterceptorFuncs(interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return &meta.NoKindMatchError{GroupKind: rolloutv1.GroupVersion.WithKind("MachineConfigPoolRollout").GroupKind()}
		},
	}).Build()
	var list rolloutv1.MachineConfigPoolRolloutList
	if served, err := ListServed(context.Background(), notServed, &list); served || err != nil || len(list.Items) != 0 {
		t.Errorf("not served: %v, %v, %d items; want false, nil, none", served, err, len(list.Items))
	}
	failing := fake.NewClientBuilder().WithScheme(Scheme).WithInterceptorFuncs(interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return errors.New("unreachable")
		},
	}).Build()
	if served, err := ListServed(context.Background(), failing, &list); !served || err == nil {
		t.Errorf("unreachable: %v, %v; want the error", served, err)
	}
	served := fake.NewClientBuilder().WithScheme(Scheme).WithObjects(&rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: "p"}}).Build()
	if ok, err := ListServed(context.Background(), served, &list); !ok || err != nil || len(list.Items) != 1 {
		t.Errorf("served: %v, %v, %d items; want true, nil, one", ok, err, len(list.Items))
	}
}
