package rolloutcli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/scheme"
)

func workerMC(name, path string) *mcfgv1.MachineConfig {
	return &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{protocol.RoleLabel: "worker"}},
		Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(
			`{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"` + path + `","contents":{"source":"data:,x"}}]}}`)}},
	}
}

// updatedWorker is pool worker Updated on what mcs render to, with that rendered config.
func updatedWorker(t *testing.T, mcs ...*mcfgv1.MachineConfig) []client.Object {
	t.Helper()
	pool := &mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: "worker"},
		Spec: mcfgv1.MachineConfigPoolSpec{
			MachineConfigSelector: &metav1.LabelSelector{MatchLabels: map[string]string{protocol.RoleLabel: "worker"}},
			NodeSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{protocol.WorkerRoleLabel: ""}},
		},
	}
	report, err := changeplan.Live(changeplan.Cluster{Pools: []*mcfgv1.MachineConfigPool{pool}, MachineConfigs: mcs}, changeplan.Applied{}, "worker")
	if err != nil || len(report.Pools) != 1 || report.Pools[0].Rendered == "" {
		t.Fatalf("rendering worker: %v %+v", err, report)
	}
	target := report.Pools[0].Rendered
	pool.Spec.Configuration.Name, pool.Status.Configuration.Name = target, target
	poolcondition.Set(&pool.Status, mcfgv1.MachineConfigPoolUpdated, corev1.ConditionTrue, "", "", metav1.Now())
	rendered := &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: target,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "machineconfiguration.openshift.io/v1", Kind: "MachineConfigPool", Name: "worker", UID: "u", Controller: ptrTo(true)}}}}
	objs := []client.Object{pool, rendered}
	for _, mc := range mcs {
		objs = append(objs, mc)
	}
	return objs
}

func ptrTo[T any](v T) *T { return &v }

// `kubectl apply` returns before the render controller renders what it applied (it waits for a
// burst to settle), so right after it the pool still reads Updated on the config before the
// change. `mco rollout status` must wait for the change, not report the old config as done.
func TestRolloutStatusWaitsForAPendingRender(t *testing.T) {
	a, b := workerMC("50-worker-a", "/etc/a"), workerMC("60-worker-b", "/etc/b")
	follow := func(objs []client.Object) (string, error) {
		c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		var out bytes.Buffer
		err := Follow(ctx, &out, c, "worker", 10*time.Millisecond)
		return out.String(), err
	}

	out, err := follow(updatedWorker(t, a))
	if err != nil || !strings.Contains(out, "pool worker is updated to") {
		t.Fatalf("a pool Updated on what its MachineConfigs render to: err %v, output:\n%s", err, out)
	}

	// b was applied after the pool rendered a: it is Updated, but not with b.
	out, err = follow(append(updatedWorker(t, a), b))
	var timedOut *TimedOutError
	if !errors.As(err, &timedOut) {
		t.Fatalf("want to wait for the render of 60-worker-b until the timeout (exit 2), got %v; output:\n%s", err, out)
	}
	if strings.Contains(out, "is updated to") || !strings.Contains(out, "waiting for the render controller to target rendered-worker-") {
		t.Errorf("output does not say it waits for the render:\n%s", out)
	}
	if !strings.Contains(err.Error(), "waiting for the render controller to target rendered-worker-") {
		t.Errorf("the timeout does not say what it waited for: %v", err)
	}
}
