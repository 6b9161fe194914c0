package containerruntime

import (
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/protocol"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func onWorker(name string, created time.Duration, annotations map[string]string, finalizers ...string) mcfgv1.ContainerRuntimeConfig {
	return mcfgv1.ContainerRuntimeConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations, Finalizers: finalizers, CreationTimestamp: metav1.NewTime(t0.Add(created))},
		Spec: mcfgv1.ContainerRuntimeConfigSpec{
			MachineConfigPoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pools.operator.machineconfiguration.openshift.io/worker": ""}},
			ContainerRuntimeConfig:    &mcfgv1.ContainerRuntimeConfiguration{},
		},
	}
}

func suffix(s string) map[string]string { return map[string]string{protocol.NameSuffixAnnotation: s} }

func TestManagedName(t *testing.T) {
	worker := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker", Labels: map[string]string{"pools.operator.machineconfiguration.openshift.io/worker": ""}}}
	cases := []struct {
		name   string
		all    []mcfgv1.ContainerRuntimeConfig
		target int
		mcs    []string
		want   string
		err    string
	}{
		{name: "the only one has no suffix", all: []mcfgv1.ContainerRuntimeConfig{onWorker("a", 0, nil)}, want: "99-worker-generated-containerruntime"},
		{name: "a recorded empty suffix", all: []mcfgv1.ContainerRuntimeConfig{onWorker("a", 0, suffix("")), onWorker("b", time.Minute, suffix("1"))}, want: "99-worker-generated-containerruntime"},
		{name: "a recorded suffix", all: []mcfgv1.ContainerRuntimeConfig{onWorker("a", 0, suffix("4"))}, want: "99-worker-generated-containerruntime-4"},
		{name: "a new one takes one past the largest", all: []mcfgv1.ContainerRuntimeConfig{onWorker("a", 0, suffix("")), onWorker("b", time.Minute, suffix("3")), onWorker("c", 2*time.Minute, nil)}, target: 2,
			want: "99-worker-generated-containerruntime-4"},
		{name: "configs of other pools do not count", all: []mcfgv1.ContainerRuntimeConfig{onWorker("a", 0, nil), func() mcfgv1.ContainerRuntimeConfig {
			c := onWorker("m", 0, suffix("7"))
			c.Spec.MachineConfigPoolSelector.MatchLabels = map[string]string{"pools.operator.machineconfiguration.openshift.io/master": ""}
			return c
		}()}, want: "99-worker-generated-containerruntime"},
		{name: "an old unannotated one keeps the MachineConfig its finalizers name", all: []mcfgv1.ContainerRuntimeConfig{
			onWorker("old", 0, nil, "99-worker-generated-containerruntime-2", "foreign"), onWorker("new", time.Minute, suffix("5"))},
			mcs: []string{"99-worker-generated-containerruntime-2"}, want: "99-worker-generated-containerruntime-2"},
		{name: "a finalizer naming a missing MachineConfig does not count", all: []mcfgv1.ContainerRuntimeConfig{
			onWorker("old", 0, nil, "99-worker-generated-containerruntime-2"), onWorker("new", time.Minute, suffix("5"))},
			want: "99-worker-generated-containerruntime-6"},
		{name: "suffix 9 taken: the tenth is refused", all: []mcfgv1.ContainerRuntimeConfig{onWorker("a", 0, suffix("9")), onWorker("b", time.Minute, nil)}, target: 1,
			err: "pool worker already has the most ContainerRuntimeConfigs it can take (10)"},
		{name: "a suffix that is not a number", all: []mcfgv1.ContainerRuntimeConfig{onWorker("a", 0, suffix("x")), onWorker("b", time.Minute, nil)}, target: 1,
			err: `ContainerRuntimeConfig a: metadata.annotations[machineconfiguration.openshift.io/mc-name-suffix]: "x" is not a number`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exists := map[string]bool{}
			for _, n := range tc.mcs {
				exists[n] = true
			}
			got, err := ManagedName(worker, &tc.all[tc.target], tc.all, func(n string) bool { return exists[n] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestGeneratedNames(t *testing.T) {
	for name, want := range map[string]bool{
		"99-worker-generated-containerruntime":      true,
		"99-my-pool-generated-containerruntime-9":   true,
		"99-worker-generated-containerruntime-0":    false,
		"99-worker-generated-containerruntime-01":   false,
		"99-worker-generated-registries":            false,
		"98-worker-generated-containerruntime":      false,
		"99-worker-generated-containerruntime-1-2x": false,
	} {
		if IsGeneratedName(name) != want {
			t.Errorf("IsGeneratedName(%q) = %v", name, !want)
		}
	}
	if got := SuffixToRecord("my-pool", "99-my-pool-generated-containerruntime-3"); got != "3" {
		t.Errorf("suffix %q", got)
	}
	if got := SuffixToRecord("worker", "99-worker-generated-containerruntime"); got != "" {
		t.Errorf("suffix %q", got)
	}
}

func TestPoolsForNeverSelectsEverything(t *testing.T) {
	pools := []mcfgv1.MachineConfigPool{{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}}
	for _, sel := range []*metav1.LabelSelector{nil, {}} {
		c := onWorker("a", 0, nil)
		c.Spec.MachineConfigPoolSelector = sel
		if got, err := PoolsFor(&c, pools); err != nil || len(got) != 0 {
			t.Errorf("selector %v selects %d pools, %v", sel, len(got), err)
		}
	}
	c := onWorker("a", 0, nil)
	c.Spec.MachineConfigPoolSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}}
	if _, err := PoolsFor(&c, pools); err == nil || !strings.Contains(err.Error(), "ContainerRuntimeConfig a: spec.machineConfigPoolSelector") {
		t.Errorf("bad selector: %v", err)
	}
}
