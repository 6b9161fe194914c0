package render

import (
	"slices"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/protocol"
)

func renderedAt(name string, minute int) mcfgv1.MachineConfig {
	mc := mcfgv1.MachineConfig{}
	mc.Name = name
	mc.CreationTimestamp = metav1.NewTime(time.Unix(int64(minute*60), 0))
	return mc
}

func TestGarbage(t *testing.T) {
	owned := []mcfgv1.MachineConfig{renderedAt("r1", 1), renderedAt("r2", 2), renderedAt("r3", 3), renderedAt("r4", 4), renderedAt("r5", 5)}
	pools := []mcfgv1.MachineConfigPool{{}}
	pools[0].Spec.Configuration.Name = "r5"
	pools[0].Status.Configuration.Name = "r2"
	nodes := []corev1.Node{{}, {}}
	nodes[0].Annotations = map[string]string{protocol.CurrentConfigAnnotation: "r1"}
	nodes[1].Annotations = map[string]string{protocol.DesiredConfigAnnotation: "r4"}
	refs := References(pools, nodes)

	for _, tc := range []struct {
		keep int
		want []string
	}{
		{keep: 5, want: nil},
		{keep: 2, want: []string{"r3"}},
		{keep: 0, want: []string{"r3"}},
	} {
		got := Garbage(owned, refs, tc.keep)
		if !slices.Equal(got, tc.want) {
			t.Errorf("keep %d: delete %v, want %v", tc.keep, got, tc.want)
		}
	}
	if got := Garbage(owned, References(nil, nil), 2); !slices.Equal(got, []string{"r3", "r2", "r1"}) {
		t.Errorf("unreferenced: delete %v, want the oldest beyond 2", got)
	}
}
