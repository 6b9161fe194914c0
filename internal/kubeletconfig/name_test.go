package kubeletconfig

import (
	"errors"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/protocol"
)

func onWorker(name string, created int, annotations map[string]string, finalizers ...string) mcfgv1.KubeletConfig {
	return mcfgv1.KubeletConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at(created), Annotations: annotations, Finalizers: finalizers},
		Spec: mcfgv1.KubeletConfigSpec{MachineConfigPoolSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"pools.operator.machineconfiguration.openshift.io/worker": ""}}},
	}
}

func suffix(s string) map[string]string { return map[string]string{protocol.NameSuffixAnnotation: s} }

func TestManagedName(t *testing.T) {
	worker := builtinPool(t, "worker")
	onMaster := onWorker("elsewhere", 9, suffix("4"))
	onMaster.Spec.MachineConfigPoolSelector.MatchLabels = map[string]string{"pools.operator.machineconfiguration.openshift.io/master": ""}
	existing := map[string]bool{"99-worker-generated-kubelet-2": true, "99-worker-generated-kubelet": true}
	cases := []struct {
		name   string
		kc     mcfgv1.KubeletConfig
		others []mcfgv1.KubeletConfig
		want   string
		field  string // of the error, when one is wanted
	}{
		{name: "the only one gets the plain name", kc: onWorker("a", 0, nil), want: "99-worker-generated-kubelet"},
		{name: "a recorded empty suffix", kc: onWorker("a", 5, suffix("")), others: []mcfgv1.KubeletConfig{onWorker("b", 1, suffix("1"))}, want: "99-worker-generated-kubelet"},
		{name: "a recorded suffix", kc: onWorker("a", 0, suffix("3")), want: "99-worker-generated-kubelet-3"},
		{name: "a second one gets -1", kc: onWorker("b", 1, nil), others: []mcfgv1.KubeletConfig{onWorker("a", 0, suffix(""))}, want: "99-worker-generated-kubelet-1"},
		{name: "one past the highest suffix", kc: onWorker("d", 3, nil),
			others: []mcfgv1.KubeletConfig{onWorker("a", 0, suffix("")), onWorker("c", 2, suffix("4")), onWorker("b", 1, suffix("2"))}, want: "99-worker-generated-kubelet-5"},
		{name: "other pools' KubeletConfigs do not count", kc: onWorker("b", 1, nil), others: []mcfgv1.KubeletConfig{onMaster}, want: "99-worker-generated-kubelet"},
		{name: "an older one without the annotation keeps its newest existing MachineConfig", kc: onWorker("old", 0, nil,
			"99-worker-generated-kubelet", "99-worker-generated-kubelet-2", "99-worker-generated-kubelet-7", "99-master-generated-kubelet-8", "foreground"),
			others: []mcfgv1.KubeletConfig{onWorker("new", 5, suffix("3"))}, want: "99-worker-generated-kubelet-2"},
		{name: "the newest one does not look at its finalizers", kc: onWorker("new", 5, nil, "99-worker-generated-kubelet-2"),
			others: []mcfgv1.KubeletConfig{onWorker("old", 0, suffix("3"))}, want: "99-worker-generated-kubelet-4"},
		{name: "ten is the most", kc: onWorker("eleventh", 10, nil), others: []mcfgv1.KubeletConfig{onWorker("tenth", 9, suffix("9"))}, field: "spec.machineConfigPoolSelector"},
		{name: "a malformed recorded suffix", kc: onWorker("a", 0, suffix("one")), field: "metadata.annotations[" + protocol.NameSuffixAnnotation + "]"},
		{name: "another's malformed suffix", kc: onWorker("b", 1, nil), others: []mcfgv1.KubeletConfig{onWorker("a", 0, suffix("x"))}, field: "metadata.annotations[" + protocol.NameSuffixAnnotation + "]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			all := append([]mcfgv1.KubeletConfig{tc.kc}, tc.others...)
			got, err := ManagedName(worker, &tc.kc, all, func(n string) bool { return existing[n] })
			if tc.field != "" {
				var fe *Error
				if !errors.As(err, &fe) || fe.Field != tc.field {
					t.Fatalf("got %q, %v; want an error on %s", got, err, tc.field)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %s", got, err, tc.want)
			}
			if s := SuffixFor("worker", got); got != GeneratedName("worker", s) {
				t.Errorf("SuffixFor(%s) = %q does not give the name back", got, s)
			}
		})
	}
}

func TestPoolsFor(t *testing.T) {
	all := []mcfgv1.MachineConfigPool{*builtinPool(t, "master"), *builtinPool(t, "worker"), *customPool("infra")}
	cases := []struct {
		selector string
		want     string // pool names, or the error's reason
	}{
		{`{matchLabels: {pools.operator.machineconfiguration.openshift.io/worker: ""}}`, "worker"},
		{`{matchExpressions: [{key: machineconfiguration.openshift.io/mco-built-in, operator: Exists}]}`, "master worker"},
		{`{matchLabels: {pools.operator.machineconfiguration.openshift.io/gpu: ""}}`, "matches no MachineConfigPool"},
		{`{}`, "is empty, so it selects no MachineConfigPool"},
		{`null`, "is empty, so it selects no MachineConfigPool"},
		{`{matchExpressions: [{key: a, operator: Bogus}]}`, `"Bogus" is not a valid label selector operator`},
	}
	for _, tc := range cases {
		kc := kubeletConfig(t, "metadata: {name: kc}\nspec: {machineConfigPoolSelector: "+tc.selector+"}")
		got, err := PoolsFor(kc, all)
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) || fe.Field != "spec.machineConfigPoolSelector" || !strings.Contains(fe.Reason, tc.want) {
				t.Errorf("%s: %v, want an error on the selector saying %q", tc.selector, err, tc.want)
			}
			continue
		}
		var names []string
		for _, p := range got {
			names = append(names, p.Name)
		}
		if strings.Join(names, " ") != tc.want {
			t.Errorf("%s: pools %v, want %s", tc.selector, names, tc.want)
		}
	}
}

func TestIsGeneratedName(t *testing.T) {
	for name, want := range map[string]bool{
		"99-worker-generated-kubelet": true, "99-my-pool-generated-kubelet-9": true, "99-worker-generated-kubelet-x": false,
		"98-worker-generated-kubelet": false, "99--generated-kubelet": false, "99-worker-generated-kubelet-1-2": false, "foregroundDeletion": false,
	} {
		if got := IsGeneratedName(name); got != want {
			t.Errorf("%s: %v", name, got)
		}
	}
}
