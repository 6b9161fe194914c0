// Package kubeadm tests config/kubeadm, the install on clusters kubeadm built: built with the
// real kubectl's kustomize, its built-in pools select kubeadm's nodes by mco's own membership
// rules and have an empty base MachineConfig each, and its server runs on kubeadm's control
// plane.
package kubeadm

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/internal/testenv"
)

// Nodes as kubeadm leaves them: the kubelet's own labels, plus kubeadm's on control-plane nodes.
var (
	controlPlane = map[string]string{"kubernetes.io/os": "linux", "kubernetes.io/hostname": "cp-0",
		"node-role.kubernetes.io/control-plane": "", "node.kubernetes.io/exclude-from-external-load-balancers": ""}
	worker  = map[string]string{"kubernetes.io/os": "linux", "kubernetes.io/hostname": "w-0"}
	windows = map[string]string{"kubernetes.io/os": "windows", "kubernetes.io/hostname": "win-0"}
)

func TestPoolsSelectKubeadmNodes(t *testing.T) {
	objs := build(t)
	var pools []*mcfgv1.MachineConfigPool
	for _, u := range objs {
		if u.GetKind() == "MachineConfigPool" {
			p := &mcfgv1.MachineConfigPool{}
			convert(t, u, p)
			pools = append(pools, p)
		}
	}
	if len(pools) != 2 {
		t.Fatalf("config/kubeadm has %d pools, want master and worker", len(pools))
	}
	infra := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "infra"},
		Spec: mcfgv1.MachineConfigPoolSpec{NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/infra": ""}}}}
	with := func(base map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for key, val := range base {
			out[key] = val
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		custom bool // with a custom pool infra besides the built-in ones
		want   string
		// selectedBy is how many of the built-in pools select the node: exactly one, or none.
		selectedBy int
	}{
		{"control-plane node", controlPlane, false, "master", 1},
		{"worker: no role label at all", worker, false, "worker", 1},
		{"Windows worker: never managed", windows, false, "", 0},
		{"node without kubernetes.io/os (not a kubelet's)", map[string]string{"kubernetes.io/hostname": "x"}, false, "", 0},
		{"control-plane node an admin labelled worker too", with(controlPlane, "node-role.kubernetes.io/worker", ""), false, "master", 1},
		{"worker in a custom pool", with(worker, "node-role.kubernetes.io/infra", ""), true, "infra", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Labels: tc.labels}}
			all := pools
			if tc.custom {
				all = append(append([]*mcfgv1.MachineConfigPool{}, pools...), infra)
			}
			got, err := rollout.PrimaryPool(node, all)
			if err != nil || got != tc.want {
				t.Errorf("pool %q, %v; want %q", got, err, tc.want)
			}
			n := 0
			for _, p := range pools {
				if rollout.Selects(p, node) {
					n++
				}
			}
			if n != tc.selectedBy {
				t.Errorf("selected by %d built-in pools, want %d", n, tc.selectedBy)
			}
		})
	}
}

// Every built-in pool has one base MachineConfig, empty, so it renders at once: a pool whose
// role selects no MachineConfig cannot render and reads Degraded.
func TestEachPoolHasAnEmptyBase(t *testing.T) {
	objs := build(t)
	var configs []*mcfgv1.MachineConfig
	for _, u := range objs {
		if u.GetKind() == "MachineConfig" {
			mc := &mcfgv1.MachineConfig{}
			convert(t, u, mc)
			configs = append(configs, mc)
		}
	}
	for _, u := range objs {
		if u.GetKind() != "MachineConfigPool" {
			continue
		}
		p := &mcfgv1.MachineConfigPool{}
		convert(t, u, p)
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.MachineConfigSelector)
		if err != nil {
			t.Fatal(err)
		}
		var selected []string
		for _, mc := range configs {
			if sel.Matches(labels.Set(mc.Labels)) {
				selected = append(selected, mc.Name)
				if got := string(mc.Spec.Config.Raw); got != `{"ignition":{"version":"3.4.0"}}` {
					t.Errorf("%s is not empty: %s", mc.Name, got)
				}
			}
		}
		if len(selected) != 1 || selected[0] != "00-"+p.Name {
			t.Errorf("pool %s selects MachineConfigs %v, want [00-%s]", p.Name, selected, p.Name)
		}
	}
}

// The server runs on kubeadm's control-plane nodes, tainted as kubeadm taints them, and nowhere
// else.
func TestServerRunsOnKubeadmControlPlane(t *testing.T) {
	var ds *appsv1.DaemonSet
	for _, u := range build(t) {
		if u.GetKind() == "DaemonSet" && u.GetName() == "mco-server" {
			ds = &appsv1.DaemonSet{}
			convert(t, u, ds)
		}
	}
	if ds == nil {
		t.Fatal("config/kubeadm has no DaemonSet mco-server")
	}
	spec := &ds.Spec.Template.Spec
	if !schedulesOn(t, spec, controlPlane) || schedulesOn(t, spec, worker) {
		t.Errorf("server schedules on the control plane: %v, on a worker: %v; want true, false", schedulesOn(t, spec, controlPlane), schedulesOn(t, spec, worker))
	}
	taint := corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}
	tolerated := false
	for _, tol := range spec.Tolerations {
		keyOK := tol.Key == taint.Key || tol.Key == "" && tol.Operator == corev1.TolerationOpExists
		tolerated = tolerated || keyOK && tol.Operator == corev1.TolerationOpExists && (tol.Effect == "" || tol.Effect == taint.Effect)
	}
	if !tolerated {
		t.Errorf("tolerations %v do not admit kubeadm's control-plane taint", spec.Tolerations)
	}
}

// schedulesOn reports whether the pod's nodeSelector and required node affinity admit a node
// with these labels, as the scheduler reads them (terms ORed, a term's expressions ANDed).
func schedulesOn(t *testing.T, spec *corev1.PodSpec, nodeLabels map[string]string) bool {
	t.Helper()
	set := labels.Set(nodeLabels)
	if !labels.SelectorFromSet(spec.NodeSelector).Matches(set) {
		return false
	}
	if spec.Affinity == nil || spec.Affinity.NodeAffinity == nil || spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		sel := &metav1.LabelSelector{}
		for _, e := range term.MatchExpressions {
			sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: e.Key, Operator: metav1.LabelSelectorOperator(e.Operator), Values: e.Values})
		}
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			t.Fatalf("node affinity term %v: %v", term, err)
		}
		if s.Matches(set) {
			return true
		}
	}
	return false
}

// build is `kubectl kustomize config/kubeadm`, decoded.
func build(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	kubectl := testenv.RequireTool(t, "kubectl")
	dir := filepath.Join(testenv.RepoRoot(), "config", "kubeadm")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl kustomize %s: %v: %s", dir, err, stderr.String())
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(&stdout, 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("decoding kubectl kustomize %s: %v", dir, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

func convert(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
}
