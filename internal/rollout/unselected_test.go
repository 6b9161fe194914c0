package rollout

import (
	"reflect"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNoPoolSaysWhy(t *testing.T) {
	pool := func(name string, sel *metav1.LabelSelector) *mcfgv1.MachineConfigPool {
		return &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: mcfgv1.MachineConfigPoolSpec{NodeSelector: sel}}
	}
	openshift := []*mcfgv1.MachineConfigPool{
		pool("worker", &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/worker": ""}}),
		pool("master", &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/master": ""}}),
	}
	node := func(labels map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels}}
	}
	for _, c := range []struct {
		name  string
		node  *corev1.Node
		pools []*mcfgv1.MachineConfigPool
		want  []string
	}{
		{"a kubeadm worker: no role label", node(map[string]string{"kubernetes.io/os": "linux"}), openshift, []string{
			"mcp/master selects node-role.kubernetes.io/master=: the node has no label node-role.kubernetes.io/master",
			"mcp/worker selects node-role.kubernetes.io/worker=: the node has no label node-role.kubernetes.io/worker",
		}},
		{"managed: no reason", node(map[string]string{"node-role.kubernetes.io/worker": ""}), openshift, nil},
		{"a Windows node", node(map[string]string{"kubernetes.io/os": "windows", "node-role.kubernetes.io/worker": ""}), openshift, []string{
			"it is a Windows node (kubernetes.io/os=windows): mco manages Linux nodes only",
		}},
		{"expressions and values", node(map[string]string{"zone": "b", "gpu": ""}), []*mcfgv1.MachineConfigPool{
			pool("a", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "c"}}}}),
			pool("b", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "gpu", Operator: metav1.LabelSelectorOpDoesNotExist}}}),
			pool("c", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "infra", Operator: metav1.LabelSelectorOpExists}}}),
			pool("d", nil),
		}, []string{
			`mcp/a selects zone in (a, c): the node's zone is "b"`,
			"mcp/b selects no gpu: the node has label gpu",
			"mcp/c selects infra: the node has no label infra",
			"mcp/d has no nodeSelector, which selects no node",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := NoPool(c.node, c.pools); !reflect.DeepEqual(got, c.want) {
				t.Errorf("NoPool:\n got %q\nwant %q", got, c.want)
			}
		})
	}
}
