package kubeletconfig

import (
	"errors"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValidateNamesTheField(t *testing.T) {
	cases := []struct {
		spec, field, reason string
	}{
		{`kubeletConfig: {cgroupDriver: cgroupfs}`, "spec.kubeletConfig.cgroupDriver", "contains: cgroupfs"},
		{`kubeletConfig: {clusterDNS: [1.1.1.1, 8.8.8.8]}`, "spec.kubeletConfig.clusterDNS", "contains: 1.1.1.1, 8.8.8.8"},
		{`kubeletConfig: {clusterDomain: example.com}`, "spec.kubeletConfig.clusterDomain", "contains: example.com"},
		{`kubeletConfig: {featureGates: {B: false, A: true}}`, "spec.kubeletConfig.featureGates", "contains: A=true, B=false"},
		{`kubeletConfig: {failSwapOn: false}`, "spec.kubeletConfig.failSwapOn", "contains: false"},
		{`kubeletConfig: {memorySwap: {swapBehavior: LimitedSwap}}`, "spec.kubeletConfig.memorySwap.swapBehavior", "contains: LimitedSwap"},
		{`{autoSizingReserved: true, kubeletConfig: {systemReserved: {memory: 1Gi}}}`, "spec.kubeletConfig.systemReserved", "spec.autoSizingReserved"},
		{`kubeletConfig: {systemReservedCgroup: /a.slice, systemCgroups: /b.slice}`, "spec.kubeletConfig.systemReservedCgroup", "must match systemCgroups (/b.slice)"},
		{`kubeletConfig: {maxPods: many}`, "spec.kubeletConfig", "is not a KubeletConfiguration"},
		{`logLevel: 11`, "spec.logLevel", "[0,10]"},
	}
	for _, tc := range cases {
		spec := tc.spec
		if !strings.HasPrefix(spec, "{") {
			spec = "{" + spec + "}"
		}
		kc := kubeletConfig(t, "metadata: {name: bad}\nspec: "+spec)
		err := Validate(kc)
		var fe *Error
		if !errors.As(err, &fe) || fe.KubeletConfig != "bad" || fe.Field != tc.field || !strings.Contains(fe.Reason, tc.reason) {
			t.Errorf("%s: %v; want KubeletConfig bad, field %s, reason with %q", tc.spec, err, tc.field, tc.reason)
		}
	}
	for _, ok := range []string{`{}`, `{kubeletConfig: {maxPods: 100}}`, `{autoSizingReserved: false, kubeletConfig: {systemReserved: {cpu: 1}}}`,
		`{kubeletConfig: {systemReservedCgroup: /system.slice, systemCgroups: /system.slice}}`, `{logLevel: 0}`} {
		if err := Validate(kubeletConfig(t, "spec: "+ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

func TestValidateForPool(t *testing.T) {
	master, worker := builtinPool(t, "master"), builtinPool(t, "worker")
	selectsMasters := customPool("cp")
	selectsMasters.Spec.NodeSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: masterNodeLabel, Operator: metav1.LabelSelectorOpExists}}}
	cases := []struct {
		pool *mcfgv1.MachineConfigPool
		spec string
		ok   bool
	}{
		{master, `{maxPods: 100}`, true},
		{master, `{staticPodPath: ""}`, false},
		{selectsMasters, `{staticPodPath: /x}`, false},
		{worker, `{staticPodPath: ""}`, true},
		{worker, `{staticPodPath: /etc/kubernetes/manifests}`, false},
	}
	for _, tc := range cases {
		kc := kubeletConfig(t, "spec: {kubeletConfig: "+tc.spec+"}")
		err := ValidateForPool(kc, tc.pool)
		var fe *Error
		if tc.ok != (err == nil) || (err != nil && (!errors.As(err, &fe) || fe.Field != "spec.kubeletConfig.staticPodPath")) {
			t.Errorf("pool %s, %s: %v", tc.pool.Name, tc.spec, err)
		}
	}
}

func TestIsControlPlanePool(t *testing.T) {
	byLabel := customPool("cp")
	byLabel.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{masterNodeLabel: ""}}
	byIn := customPool("cp2")
	byIn.Spec.NodeSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: masterNodeLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{""}}}}
	notIn := customPool("cp3")
	notIn.Spec.NodeSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: masterNodeLabel, Operator: metav1.LabelSelectorOpDoesNotExist}}}
	arbiter := customPool("arbiter")
	for _, tc := range []struct {
		pool *mcfgv1.MachineConfigPool
		want bool
	}{{builtinPool(t, "master"), true}, {arbiter, true}, {byLabel, true}, {byIn, true}, {notIn, false}, {builtinPool(t, "worker"), false}, {customPool("infra"), false}} {
		if got := IsControlPlanePool(tc.pool); got != tc.want {
			t.Errorf("%s: %v", tc.pool.Name, got)
		}
	}
}

func TestUnknownFields(t *testing.T) {
	kc := kubeletConfig(t, `spec: {kubeletConfig: {maxpods: 100, MaxPods: 110, podPidsLimit: 10}}`)
	got := strings.Join(UnknownFields(kc), "; ")
	if !strings.Contains(got, `"maxpods"`) || !strings.Contains(got, `"MaxPods"`) || strings.Contains(got, "podPidsLimit") {
		t.Errorf("unknown fields %q; want maxpods and MaxPods only", got)
	}
	if got := UnknownFields(kubeletConfig(t, `spec: {kubeletConfig: {maxPods: 100}}`)); len(got) != 0 {
		t.Errorf("unknown fields %v in a correct config", got)
	}
}
