package node

import (
	"context"
	"reflect"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/controller/statuspatch"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestPoolStatusHasEveryFieldOpenShiftWrites reads a pool as the API server stores it, after
// the controller wrote its status with none of its nodes degraded or unavailable: every field
// openshift/api declares without omitempty is there (degradedMachineCount 0, not absent, which
// `kubectl get mcp` and `kubectl wait --for=jsonpath` need), as OpenShift's whole-status writes
// leave them.
func TestPoolStatusHasEveryFieldOpenShiftWrites(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const role, cfg = "status-fields", "rendered-status-fields-a"
	one := intstr.FromInt32(1)
	newPool(t, ctx, role, role, cfg, &one)
	createNodes(t, ctx, role, 2, cfg, map[string]string{roleLabel(role): ""})
	waitPool(t, ctx, role, "2 nodes updated", 30*time.Second, updatedTo(cfg, 2))

	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(mcfgv1.GroupVersion.WithKind("MachineConfigPool"))
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: role}, stored); err != nil {
		t.Fatal(err)
	}
	status, _, _ := unstructured.NestedMap(stored.Object, "status")
	required := statuspatch.RequiredFields(reflect.TypeOf(mcfgv1.MachineConfigPoolStatus{}))
	if len(required) == 0 {
		t.Fatal("openshift/api's pool status declares no required field: the check would check nothing")
	}
	for _, f := range required {
		if _, ok := status[f.JSON]; !ok {
			t.Errorf("the stored pool's status has no %s (OpenShift always writes it): %v", f.JSON, status)
		}
	}
	if got, _, _ := unstructured.NestedInt64(stored.Object, "status", "degradedMachineCount"); got != 0 {
		t.Errorf("degradedMachineCount = %d, want 0", got)
	}
}
