package machineconfignode

import (
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mco-dev/mco/internal/protocol"
)

func nodeWith(desired string, uid types.UID) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-0", UID: uid}}
	if desired != "" {
		n.Annotations = map[string]string{protocol.DesiredConfigAnnotation: desired}
	}
	return n
}

func TestFor(t *testing.T) {
	for _, c := range []struct {
		name, pool, desired string
		want                string // spec.configVersion.desired; "" = no object
		err                 string
	}{
		{name: "targeted", pool: "worker", desired: "rendered-worker-1", want: "rendered-worker-1"},
		{name: "not targeted yet", pool: "infra", want: NotYetSet},
		{name: "no pool", pool: "", desired: "rendered-worker-1"},
		{name: "a desiredConfig that is no name", pool: "worker", desired: "Rendered_Worker",
			err: `node worker-0: annotation machineconfiguration.openshift.io/desiredConfig="Rendered_Worker" is not a MachineConfig name: a lowercase RFC 1123 subdomain`},
	} {
		t.Run(c.name, func(t *testing.T) {
			node := nodeWith(c.desired, "uid-1")
			got, err := For(node, c.pool)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" {
				if got != nil {
					t.Fatalf("got %+v, want no MachineConfigNode", got)
				}
				return
			}
			want := mcfgv1.MachineConfigNodeSpec{Node: mcfgv1.MCOObjectReference{Name: "worker-0"}, Pool: mcfgv1.MCOObjectReference{Name: c.pool},
				ConfigVersion: mcfgv1.MachineConfigNodeSpecMachineConfigVersion{Desired: c.want}}
			if got.Name != "worker-0" || got.Spec != want {
				t.Errorf("got %s %+v, want worker-0 %+v", got.Name, got.Spec, want)
			}
			ref := got.OwnerReferences
			if len(ref) != 1 || ref[0].Kind != "Node" || ref[0].APIVersion != "v1" || ref[0].Name != "worker-0" || ref[0].UID != "uid-1" || ref[0].BlockOwnerDeletion != nil {
				t.Errorf("ownerReferences %+v, want the Node alone, without blockOwnerDeletion", ref)
			}
		})
	}
}

func TestReconciled(t *testing.T) {
	want, _ := For(nodeWith("rendered-worker-2", "uid-2"), "worker")
	other := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Thing", Name: "t", UID: "uid-x"}
	for _, c := range []struct {
		name     string
		have     func(*mcfgv1.MachineConfigNode)
		changed  bool
		wantRefs []types.UID
	}{
		{name: "in sync", have: func(*mcfgv1.MachineConfigNode) {}, wantRefs: []types.UID{"uid-2"}},
		{name: "new desired", changed: true, wantRefs: []types.UID{"uid-2"},
			have: func(m *mcfgv1.MachineConfigNode) { m.Spec.ConfigVersion.Desired = "rendered-worker-1" }},
		{name: "moved pool", changed: true, wantRefs: []types.UID{"uid-2"},
			have: func(m *mcfgv1.MachineConfigNode) { m.Spec.Pool.Name = "infra" }},
		{name: "node registered again under the same name", changed: true, wantRefs: []types.UID{"uid-2"},
			have: func(m *mcfgv1.MachineConfigNode) { m.OwnerReferences[0].UID = "uid-1" }},
		{name: "another owner is kept", changed: false, wantRefs: []types.UID{"uid-x", "uid-2"},
			have: func(m *mcfgv1.MachineConfigNode) {
				m.OwnerReferences = []metav1.OwnerReference{other, m.OwnerReferences[0]}
			}},
		{name: "owner missing", changed: true, wantRefs: []types.UID{"uid-2"},
			have: func(m *mcfgv1.MachineConfigNode) { m.OwnerReferences = nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			have := want.DeepCopy()
			have.Status.ConfigVersion = &mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "rendered-worker-1", Desired: "rendered-worker-1"}
			c.have(have)
			before := have.DeepCopy()
			got, changed := Reconciled(have, want)
			if changed != c.changed {
				t.Errorf("changed = %v, want %v", changed, c.changed)
			}
			if got.Spec != want.Spec {
				t.Errorf("spec %+v, want %+v", got.Spec, want.Spec)
			}
			var uids []types.UID
			for _, r := range got.OwnerReferences {
				uids = append(uids, r.UID)
			}
			if strings.Join(toStrings(uids), ",") != strings.Join(toStrings(c.wantRefs), ",") {
				t.Errorf("owners %v, want %v", uids, c.wantRefs)
			}
			if got.Status.ConfigVersion == nil || got.Status.ConfigVersion.Current != "rendered-worker-1" {
				t.Errorf("status not kept: %+v", got.Status)
			}
			if before.Spec != have.Spec {
				t.Error("Reconciled changed its argument")
			}
		})
	}
}

func toStrings(uids []types.UID) []string {
	out := make([]string, len(uids))
	for i, u := range uids {
		out[i] = string(u)
	}
	return out
}
