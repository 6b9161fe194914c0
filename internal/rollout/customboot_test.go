package rollout

import (
	"maps"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/protocol"
)

func TestFirstBootPending(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        string
		pending     bool
	}{
		{"booted through the server", map[string]string{protocol.FirstPivotConfigAnnotation: "rendered-infra-1"}, "rendered-infra-1", true},
		{"settled", map[string]string{protocol.FirstPivotConfigAnnotation: "rendered-infra-1", protocol.CustomPoolLabelsAppliedAnnotation: ""}, "", false},
		{"never booted through the server", map[string]string{protocol.CurrentConfigAnnotation: "rendered-worker-1"}, "", false},
		{"empty first pivot", map[string]string{protocol.FirstPivotConfigAnnotation: ""}, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: tc.annotations}}
			got, pending := FirstBootPending(n)
			if got != tc.want || pending != tc.pending {
				t.Errorf("FirstBootPending = %q, %v; want %q, %v", got, pending, tc.want, tc.pending)
			}
		})
	}
}

func TestOwningPool(t *testing.T) {
	ref := func(apiVersion, kind, name string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name}
	}
	tests := []struct {
		name string
		refs []metav1.OwnerReference
		want string
	}{
		{"the render controller's owner", []metav1.OwnerReference{ref("machineconfiguration.openshift.io/v1", "MachineConfigPool", "infra")}, "infra"},
		{"the pool among other owners", []metav1.OwnerReference{ref("v1", "ConfigMap", "x"), ref("machineconfiguration.openshift.io/v1", "MachineConfigPool", "infra")}, "infra"},
		{"a kind of the same name in another group", []metav1.OwnerReference{ref("example.com/v1", "MachineConfigPool", "infra")}, ""},
		{"no owner (an admin's MachineConfig)", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mc := &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: "rendered-infra-1", OwnerReferences: tc.refs}}
			if got := OwningPool(mc); got != tc.want {
				t.Errorf("OwningPool = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDecideCustomBoot(t *testing.T) {
	selector := func(sel *metav1.LabelSelector) func(*mcfgv1.MachineConfigPool) {
		return func(p *mcfgv1.MachineConfigPool) { p.Spec.NodeSelector = sel }
	}
	expr := func(key string, op metav1.LabelSelectorOperator, values ...string) metav1.LabelSelectorRequirement {
		return metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: values}
	}
	const infraRole, gpuRole = "node-role.kubernetes.io/infra", "node-role.kubernetes.io/gpu"
	master, worker, gpu := pool("master", ""), pool("worker", ""), pool("gpu", "")
	basePools := []*mcfgv1.MachineConfigPool{master, worker, gpu}
	withInfra := func(opts ...func(*mcfgv1.MachineConfigPool)) []*mcfgv1.MachineConfigPool {
		return append(basePools[:len(basePools):len(basePools)], pool("infra", "", opts...))
	}

	tests := []struct {
		name    string
		node    *corev1.Node
		booted  string
		pools   []*mcfgv1.MachineConfigPool
		want    CustomBoot
		refused string // substring of Refused
	}{
		{name: "booted into a custom pool: its role label", node: node("n", "rendered-infra-1"), booted: "infra", pools: withInfra(),
			want: CustomBoot{Pool: "infra", Labels: map[string]string{infraRole: ""}}},
		{name: "matchLabels, In with one value and Exists", node: node("n", "c"), booted: "infra",
			pools: withInfra(selector(&metav1.LabelSelector{
				MatchLabels: map[string]string{infraRole: "", "tier": "gold"},
				MatchExpressions: []metav1.LabelSelectorRequirement{
					expr("zone-class", metav1.LabelSelectorOpIn, "fast"),
					expr("infra.example.com/dedicated", metav1.LabelSelectorOpExists),
					expr("tier", metav1.LabelSelectorOpIn, "gold"), // matchLabels already sets it
				}})),
			want: CustomBoot{Pool: "infra", Labels: map[string]string{infraRole: "", "tier": "gold", "zone-class": "fast", "infra.example.com/dedicated": ""}}},
		{name: "already labelled (an admin was first): only the annotation", node: node("n", "c", label(infraRole, "")), booted: "infra", pools: withInfra(),
			want: CustomBoot{Pool: "infra", Labels: map[string]string{}}},
		{name: "booted into worker: nothing to do", node: node("n", "c"), booted: "worker", pools: withInfra()},
		{name: "booted into master: nothing to do", node: node("n", "c"), booted: "master", pools: withInfra()},
		{name: "booted into arbiter: nothing to do", node: node("n", "c"), booted: "arbiter", pools: withInfra()},
		{name: "owner unknown (no such MachineConfig, or an admin's)", node: node("n", "c"), booted: "", pools: withInfra()},
		{name: "the pool was deleted: the node stays where its labels put it", node: node("n", "c"), booted: "infra", pools: basePools},
		{name: "windows nodes are never managed", node: node("n", "c", label(OSLabel, "windows")), booted: "infra", pools: withInfra()},
		{name: "a label the node has with another value is not replaced", node: node("n", "c", label("tier", "silver")), booted: "infra",
			pools:   withInfra(selector(&metav1.LabelSelector{MatchLabels: map[string]string{infraRole: "", "tier": "gold"}})),
			want:    CustomBoot{Pool: "infra"},
			refused: `would replace the node's own: tier="gold" (the node has "silver")`},
		{name: "a node in another custom pool would be in two", node: node("n", "c", label(gpuRole, "")), booted: "infra", pools: withInfra(),
			want:    CustomBoot{Pool: "infra"},
			refused: "node n booted into pool infra, but with the pool's labels node n belongs to 2 custom pools (gpu, infra)"},
		{name: "two custom pools with the same selector", node: node("n", "c"), booted: "infra",
			pools:   append(withInfra(), pool("infra-twin", "", selector(&metav1.LabelSelector{MatchLabels: map[string]string{infraRole: ""}}))),
			want:    CustomBoot{Pool: "infra"},
			refused: "belongs to 2 custom pools (infra, infra-twin)"},
		{name: "a control-plane node stays master's", node: node("n", "c", label(protocol.MasterRoleLabel, "")), booted: "infra", pools: withInfra(),
			want:    CustomBoot{Pool: "infra"},
			refused: "it would belong to pool master"},
		{name: "a selector the derived labels cannot satisfy", node: node("n", "c"), booted: "infra",
			pools: withInfra(selector(&metav1.LabelSelector{
				MatchLabels:      map[string]string{infraRole: ""},
				MatchExpressions: []metav1.LabelSelectorRequirement{expr("size", metav1.LabelSelectorOpIn, "l", "xl")}})),
			want:    CustomBoot{Pool: "infra"},
			refused: "it would belong to pool worker"},
		{name: "a selector that gives no label", node: node("n", "c"), booted: "infra",
			pools:   withInfra(selector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{expr("x", metav1.LabelSelectorOpDoesNotExist)}})),
			want:    CustomBoot{Pool: "infra"},
			refused: "the pool's nodeSelector gives no label to apply"},
		{name: "an empty selector gives no label (it selects nothing)", node: node("n", "c"), booted: "infra",
			pools:   withInfra(selector(&metav1.LabelSelector{})),
			want:    CustomBoot{Pool: "infra"},
			refused: "gives no label to apply"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.node.DeepCopy()
			got := DecideCustomBoot(tc.node, tc.booted, tc.pools)
			if tc.node.Labels == nil || !maps.Equal(tc.node.Labels, before.Labels) {
				t.Fatalf("the input node was modified: %v", tc.node.Labels)
			}
			if (tc.refused == "") != (got.Refused == "") || !strings.Contains(got.Refused, tc.refused) {
				t.Fatalf("Refused = %q, want one containing %q", got.Refused, tc.refused)
			}
			if got.Pool != tc.want.Pool || !maps.Equal(got.Labels, tc.want.Labels) || (got.Labels == nil) != (tc.want.Labels == nil) {
				t.Errorf("decision = %+v, want %+v", got, tc.want)
			}
			if got.Refused != "" || len(got.Labels) == 0 {
				return
			}
			labelled := tc.node.DeepCopy()
			maps.Copy(labelled.Labels, got.Labels)
			if primary, err := PrimaryPool(labelled, tc.pools); primary != tc.booted || err != nil {
				t.Errorf("labelled node belongs to %q (%v), want %q", primary, err, tc.booted)
			}
		})
	}
}
