package rolloutcli

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/scheme"
)

// Where MachineConfigPoolRollout is not served, each list of it makes the client rediscover
// every API group; `mco rollout status` refreshes every second, so it asks once, not per frame.
func TestRolloutStatusAsksOnceWherePoliciesAreNotServed(t *testing.T) {
	pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}
	policyLists := 0
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(pool).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*rolloutv1.MachineConfigPoolRolloutList); ok {
				policyLists++
				return &meta.NoKindMatchError{GroupKind: rolloutv1.GroupVersion.WithKind("MachineConfigPoolRollout").GroupKind()}
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := Follow(ctx, &bytes.Buffer{}, c, "worker", 10*time.Millisecond)
	var timedOut *TimedOutError
	if !errors.As(err, &timedOut) {
		t.Fatalf("want the timeout (exit 2), got %v", err)
	}
	if policyLists != 1 {
		t.Errorf("listed MachineConfigPoolRollouts %d times, want once", policyLists)
	}
}
