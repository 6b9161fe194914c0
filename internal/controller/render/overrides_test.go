package render

import (
	"context"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestIrreconcilableValidationOverrides: a disk added after install is refused (RenderDegraded,
// the target stays) until MachineConfiguration cluster's irreconcilableValidationOverrides allows
// Disks; the change to the MachineConfiguration alone renders the pool again, with the disk.
func TestIrreconcilableValidationOverrides(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const role = "overrides"
	if err := k8sClient.Create(ctx, fileMC(role, "00-overrides-base", "/etc/base", "base")); err != nil {
		t.Fatal(err)
	}
	newPool(t, ctx, role)
	r0 := waitFor(t, ctx, role, "a first render", targetIsNot("")).Spec.Configuration.Name

	disk := &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "50-overrides-disk", Labels: map[string]string{protocol.RoleLabel: role}},
		Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(
			`{"ignition":{"version":"3.4.0"},"storage":{"disks":[{"device":"/dev/sdb","wipeTable":true}]}}`)}},
	}
	if err := k8sClient.Create(ctx, disk); err != nil {
		t.Fatal(err)
	}
	refused := waitFor(t, ctx, role, "the disk refused", func(p *mcfgv1.MachineConfigPool) bool {
		return poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolRenderDegraded)
	})
	if msg := poolcondition.Get(&refused.Status, mcfgv1.MachineConfigPoolRenderDegraded).Message; !strings.Contains(msg, "storage.disks") {
		t.Fatalf("RenderDegraded does not name storage.disks: %s", msg)
	}
	if refused.Spec.Configuration.Name != r0 {
		t.Fatalf("target moved to %s despite the refusal", refused.Spec.Configuration.Name)
	}

	// Unstructured: the typed object would send an empty nodeDisruptionPolicy, which the CRD refuses.
	mc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operator.openshift.io/v1", "kind": "MachineConfiguration",
		"metadata": map[string]any{"name": protocol.ClusterMachineConfiguration},
		"spec":     map[string]any{"managementState": "Managed", "irreconcilableValidationOverrides": map[string]any{"storage": []any{"Disks"}}},
	}}
	if err := k8sClient.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), mc) })
	accepted := waitFor(t, ctx, role, "the disk accepted", func(p *mcfgv1.MachineConfigPool) bool {
		return p.Spec.Configuration.Name != r0 && !poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolRenderDegraded)
	})
	var rendered mcfgv1.MachineConfig
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: accepted.Spec.Configuration.Name}, &rendered); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rendered.Spec.Config.Raw), "/dev/sdb") {
		t.Fatalf("the new rendered config lacks the disk: %s", rendered.Spec.Config.Raw)
	}
}
