package rollout

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/bootimage"
	"github.com/mco-dev/mco/internal/render"
)

// selectorMatches is the meaning of a label selector, written from the API documentation
// rather than through apimachinery: every matchLabels pair present, every expression true.
func selectorMatches(sel *metav1.LabelSelector, set map[string]string) bool {
	for k, v := range sel.MatchLabels {
		if got, ok := set[k]; !ok || got != v {
			return false
		}
	}
	for _, r := range sel.MatchExpressions {
		v, has := set[r.Key]
		in := has && slices.Contains(r.Values, v)
		switch r.Operator {
		case metav1.LabelSelectorOpIn:
			if !in {
				return false
			}
		case metav1.LabelSelectorOpNotIn:
			if in {
				return false
			}
		case metav1.LabelSelectorOpExists:
			if !has {
				return false
			}
		case metav1.LabelSelectorOpDoesNotExist:
			if has {
				return false
			}
		}
	}
	return true
}

// parseLabels reads "key=value" lines; a line without "=" is a key with an empty value.
func parseLabels(s string) map[string]string {
	set := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		set[k] = v
	}
	return set
}

// FuzzPoolSelectors turns any label selector into each selector mco reads: a pool's
// machineConfigSelector (render.Select), its nodeSelector (Selects, PrimaryPool) and the boot
// image controller's Partial MachineSet selector. Each must select exactly what the selector
// means (selectorMatches) when it parses; an empty or absent pool selector selects nothing, with
// ErrNoSelector from render; a selector that does not parse is an error naming the field in
// render and bootimage, and selects no node.
//
// Seeds: the f.Add ones and testdata/fuzz/FuzzPoolSelectors (config/pools and the custom pool
// of the README, with labels that match and labels that do not).
func FuzzPoolSelectors(f *testing.F) {
	f.Add([]byte(`{"matchLabels":{"machineconfiguration.openshift.io/role":"worker"}}`), "machineconfiguration.openshift.io/role=worker")
	f.Add([]byte(`{"matchLabels":{"node-role.kubernetes.io/worker":""}}`), "node-role.kubernetes.io/worker=\nkubernetes.io/os=linux")
	f.Add([]byte(`{"matchExpressions":[{"key":"machineconfiguration.openshift.io/role","operator":"In","values":["worker","infra"]}]}`), "machineconfiguration.openshift.io/role=infra")
	f.Add([]byte(`{"matchExpressions":[{"key":"a","operator":"NotIn","values":["x"]},{"key":"b","operator":"Exists"},{"key":"c","operator":"DoesNotExist"}]}`), "b=1\na=y")
	f.Add([]byte(`{"matchExpressions":[{"key":"a","operator":"In","values":[]}]}`), "a=")
	f.Add([]byte(`{"matchExpressions":[{"key":"a","operator":"Gt","values":["1"]}]}`), "a=2")
	f.Add([]byte(`{"matchLabels":{"bad key!":"v"}}`), "bad key!=v")
	f.Add([]byte(`{}`), "a=b")
	f.Add([]byte(`null`), "")
	f.Fuzz(func(t *testing.T, selectorJSON []byte, labelLines string) {
		var sel *metav1.LabelSelector
		if err := json.Unmarshal(selectorJSON, &sel); err != nil {
			return
		}
		set := parseLabels(labelLines)
		empty := sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0)
		_, parseErr := metav1.LabelSelectorAsSelector(sel)
		want := !empty && parseErr == nil && selectorMatches(sel, set)

		// The machineConfigSelector.
		pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "infra"}}
		pool.Spec.MachineConfigSelector = sel
		yes := true
		mc := &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: "99-fuzz", Labels: set}}
		rendered := &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: "rendered-infra-0", Labels: set,
			OwnerReferences: []metav1.OwnerReference{{Kind: "MachineConfigPool", Name: "infra", Controller: &yes}}}}
		selected, err := render.Select(pool, []*mcfgv1.MachineConfig{mc, rendered})
		var noSel *render.ErrNoSelector
		var renderErr *render.Error
		switch {
		case empty:
			if !errors.As(err, &noSel) {
				t.Fatalf("render.Select with empty selector %s: %v, want ErrNoSelector", selectorJSON, err)
			}
		case parseErr != nil:
			if !errors.As(err, &renderErr) || renderErr.Field != "spec.machineConfigSelector" {
				t.Fatalf("render.Select with bad selector %s: %v, want an error naming spec.machineConfigSelector", selectorJSON, err)
			}
		case err != nil:
			t.Fatalf("render.Select(%s): %v", selectorJSON, err)
		case slices.Contains(selected, rendered):
			t.Fatalf("render.Select(%s) selected a rendered MachineConfig", selectorJSON)
		case (len(selected) == 1) != want:
			t.Fatalf("render.Select(%s) on labels %v selected %d, want match=%v", selectorJSON, set, len(selected), want)
		}

		// The nodeSelector.
		pool.Spec.NodeSelector = sel
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: set}}
		if got := Selects(pool, node); got != want {
			t.Fatalf("Selects(%s) on labels %v = %v, want %v", selectorJSON, set, got, want)
		}
		primary, err := PrimaryPool(node, []*mcfgv1.MachineConfigPool{pool})
		wantPrimary := ""
		if want && set[OSLabel] != "windows" {
			wantPrimary = "infra"
		}
		if err != nil || primary != wantPrimary {
			t.Fatalf("PrimaryPool(%s) on labels %v = %q, %v; want %q", selectorJSON, set, primary, err, wantPrimary)
		}

		// The boot image controller's Partial selector: here an empty selector is the API's
		// "everything".
		if sel == nil {
			return
		}
		e, err := bootimage.MachineSetEnrollment([]operatorv1.MachineManager{{Resource: operatorv1.MachineSets, APIGroup: operatorv1.MachineAPI,
			Selection: operatorv1.MachineManagerSelector{Mode: operatorv1.Partial, Partial: &operatorv1.PartialSelector{MachineResourceSelector: sel}}}})
		if (err != nil) != (parseErr != nil) {
			t.Fatalf("MachineSetEnrollment(%s): %v, selector parse: %v", selectorJSON, err, parseErr)
		}
		if err == nil && e.Enrolls(set) != selectorMatches(sel, set) {
			t.Fatalf("MachineSetEnrollment(%s).Enrolls(%v) = %v", selectorJSON, set, e.Enrolls(set))
		}
	})
}
