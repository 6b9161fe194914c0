package rollout

import (
	"errors"
	"slices"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPrimaryPool(t *testing.T) {
	master, worker := pool("master", ""), pool("worker", "")
	infra, gpu := pool("infra", ""), pool("gpu", "")
	selectAll := pool("everything", "", func(p *mcfgv1.MachineConfigPool) { p.Spec.NodeSelector = &metav1.LabelSelector{} })
	noSelector := pool("nothing", "", func(p *mcfgv1.MachineConfigPool) { p.Spec.NodeSelector = nil })
	pools := []*mcfgv1.MachineConfigPool{master, worker, infra, gpu, selectAll, noSelector}

	for _, tc := range []struct {
		name      string
		labels    map[string]string
		want      string
		ambiguous bool
	}{
		{"plain worker", map[string]string{"node-role.kubernetes.io/worker": ""}, "worker", false},
		{"custom pool wins over worker (it inherits worker)", map[string]string{"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/infra": ""}, "infra", false},
		{"custom pool alone", map[string]string{"node-role.kubernetes.io/infra": ""}, "infra", false},
		{"two custom pools: unmanaged", map[string]string{"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/infra": "", "node-role.kubernetes.io/gpu": ""}, "", true},
		{"master wins over a custom pool", map[string]string{"node-role.kubernetes.io/master": "", "node-role.kubernetes.io/infra": ""}, "master", false},
		{"master wins over two custom pools", map[string]string{"node-role.kubernetes.io/master": "", "node-role.kubernetes.io/infra": "", "node-role.kubernetes.io/gpu": ""}, "master", false},
		{"master and worker (compact cluster): master", map[string]string{"node-role.kubernetes.io/master": "", "node-role.kubernetes.io/worker": ""}, "master", false},
		{"windows never", map[string]string{"node-role.kubernetes.io/worker": "", OSLabel: "windows"}, "", false},
		{"linux label is fine", map[string]string{"node-role.kubernetes.io/worker": "", OSLabel: "linux"}, "worker", false},
		{"no pool; empty and nil selectors match nothing", map[string]string{"other": ""}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: tc.labels}}
			got, err := PrimaryPool(n, pools)
			var amb *AmbiguousPoolError
			if errors.As(err, &amb) != tc.ambiguous {
				t.Fatalf("ambiguity error = %v, want ambiguous=%v", err, tc.ambiguous)
			}
			if tc.ambiguous && !slices.Equal(amb.Pools, []string{"gpu", "infra"}) {
				t.Errorf("error names pools %v", amb.Pools)
			}
			if got != tc.want {
				t.Errorf("pool = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMembersCountsNodeOnlyInItsPrimaryPool(t *testing.T) {
	worker, infra, gpu := pool("worker", ""), pool("infra", ""), pool("gpu", "")
	pools := []*mcfgv1.MachineConfigPool{worker, infra, gpu}
	nodes := []*corev1.Node{
		node("w1", "c"),
		node("i1", "c", label("node-role.kubernetes.io/infra", "")),
		node("both", "c", label("node-role.kubernetes.io/infra", ""), label("node-role.kubernetes.io/gpu", "")),
		node("joining", "", unmanaged),
	}
	w, amb := Members(worker, pools, nodes)
	if got := names(w); !slices.Equal(got, []string{"w1"}) || len(amb) != 0 {
		t.Errorf("worker members %v ambiguous %v; want [w1] and none (infra node counted only in infra, joining node not yet)", got, amb)
	}
	i, amb := Members(infra, pools, nodes)
	if got := names(i); !slices.Equal(got, []string{"i1"}) || len(amb) != 1 || amb[0].Node != "both" {
		t.Errorf("infra members %v ambiguous %v; want [i1] and [both]", got, amb)
	}
	if _, amb := Members(worker, pools, nodes); len(amb) != 0 {
		t.Errorf("the ambiguity is reported by the custom pools concerned, not worker: %v", amb)
	}
}
