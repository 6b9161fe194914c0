package machineconfignode

import (
	"context"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestSpecEditedByHand: a spec another writer changed is put back, though the controller
// caches no spec: the edit moves the generation past the one whose spec it wrote, so it reads
// the object again.
func TestSpecEditedByHand(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool(t, ctx, "edit-worker", map[string]string{"edit-role/worker": ""})
	n := node(t, ctx, "edit-0", map[string]string{"edit-role/worker": ""}, nil)
	await(t, ctx, "edit-0", "created", func(m *mcfgv1.MachineConfigNode) bool { return m != nil })
	annotate(t, ctx, n, protocol.DesiredConfigAnnotation, "rendered-edit-1")
	m := await(t, ctx, "edit-0", "desired rendered-edit-1", func(m *mcfgv1.MachineConfigNode) bool {
		return m != nil && m.Spec.ConfigVersion.Desired == "rendered-edit-1"
	})

	for _, edit := range []func(*mcfgv1.MachineConfigNode){
		func(m *mcfgv1.MachineConfigNode) { m.Spec.ConfigVersion.Desired = "rendered-by-hand" },
		func(m *mcfgv1.MachineConfigNode) { m.Spec.Pool.Name = "elsewhere" },
	} {
		before := m.DeepCopy()
		edit(m)
		if err := env.Client.Patch(ctx, m, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
		m = await(t, ctx, "edit-0", "put back", func(m *mcfgv1.MachineConfigNode) bool {
			return m != nil && m.Generation > before.Generation+1
		})
		wantSpec(t, m, "edit-worker", "rendered-edit-1")
	}

	// The controller's own change after that is written as usual.
	annotate(t, ctx, n, protocol.DesiredConfigAnnotation, "rendered-edit-2")
	m = await(t, ctx, "edit-0", "desired rendered-edit-2", func(m *mcfgv1.MachineConfigNode) bool {
		return m != nil && m.Spec.ConfigVersion.Desired == "rendered-edit-2"
	})
	wantSpec(t, m, "edit-worker", "rendered-edit-2")
}
