package generatedmc

import (
	"strings"
	"testing"
	"time"
)

func TestNames(t *testing.T) {
	for name, want := range map[string]string{
		"99-worker-generated-kubelet": "", "99-worker-generated-kubelet-9": "9", "99-worker-generated-kubelet-10": "10",
		"99-worker-generated-kubelet-0": "no", "99-worker-generated-kubelet-01": "no", "99-worker-generated-kubelet-x": "no",
		"98-worker-generated-kubelet": "no", "99-infra-generated-kubelet": "no", "99-worker-generated-containerruntime": "no",
	} {
		suffix, ok := KubeletNames.SuffixOf("worker", name)
		if got := map[bool]string{true: suffix, false: "no"}[ok]; got != want {
			t.Errorf("SuffixOf(worker, %s) = %q, want %q", name, got, want)
		}
		if want != "no" && KubeletNames.Of("worker", suffix) != name {
			t.Errorf("Of(worker, %q) does not give %s back", suffix, name)
		}
		if want != "no" && !KubeletNames.IsName(name) {
			t.Errorf("IsName(%s) = false", name)
		}
	}
	for _, name := range []string{"99--generated-kubelet", "99-worker-generated-kubelet-1-2", "foregroundDeletion", "99-worker-generated-containerruntime"} {
		if KubeletNames.IsName(name) {
			t.Errorf("IsName(%s) = true", name)
		}
	}
	exists := map[string]bool{"99-worker-generated-kubelet": true, "99-worker-generated-kubelet-2": true, "99-master-generated-kubelet-8": true}
	got, ok := KubeletNames.newestFinalizer("worker", []string{"99-worker-generated-kubelet", "99-worker-generated-kubelet-2",
		"99-worker-generated-kubelet-7", "99-master-generated-kubelet-8", "foreground"}, func(n string) bool { return exists[n] })
	if !ok || got != "99-worker-generated-kubelet-2" {
		t.Errorf("newestFinalizer = %q, %v; want the existing one with the largest suffix", got, ok)
	}
	if _, ok := KubeletNames.newestFinalizer("worker", []string{"99-worker-generated-kubelet-7"}, func(string) bool { return false }); ok {
		t.Error("a finalizer naming a missing MachineConfig counted")
	}
}

// Pick, as both generators call it; their own tests cover the messages they make of its errors.
func TestPick(t *testing.T) {
	at := func(name string, minute int, suffix *string, finalizers ...string) Claimant {
		return Claimant{Name: name, Suffix: suffix, Created: time.Unix(int64(minute)*60, 0), Finalizers: finalizers}
	}
	s := func(v string) *string { return &v }
	exists := func(n string) bool { return n == "99-worker-generated-kubelet-2" }
	cases := []struct {
		name   string
		self   Claimant
		others []Claimant
		want   string
		err    string
	}{
		{"alone", at("a", 0, nil), nil, "99-worker-generated-kubelet", ""},
		{"recorded", at("a", 0, s("4"), "99-worker-generated-kubelet-2"), []Claimant{at("b", 1, s("9"))}, "99-worker-generated-kubelet-4", ""},
		{"recorded empty", at("a", 0, s("")), []Claimant{at("b", 1, s("3"))}, "99-worker-generated-kubelet", ""},
		{"one past the largest", at("c", 2, nil), []Claimant{at("a", 0, s("")), at("b", 1, s("3"))}, "99-worker-generated-kubelet-4", ""},
		{"older keeps its finalizer's", at("old", 0, nil, "99-worker-generated-kubelet-2"), []Claimant{at("new", 1, s("5"))}, "99-worker-generated-kubelet-2", ""},
		{"newest ignores its finalizers", at("new", 2, nil, "99-worker-generated-kubelet-2"), []Claimant{at("b", 1, s("5"))}, "99-worker-generated-kubelet-6", ""},
		{"own suffix that names nothing", at("a", 0, s("01")), nil, "", `a: "01" is not a name suffix`},
		{"another's suffix not a number", at("b", 1, nil), []Claimant{at("a", 0, s("x"))}, "", `a: "x" is not a name suffix`},
		{"no name left", at("b", 1, nil), []Claimant{at("a", 0, s("9"))}, "", ErrNoNameLeft.Error()},
	}
	for _, tc := range cases {
		got, err := KubeletNames.Pick("worker", tc.self, tc.others, exists)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %q, %v; want error %q", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}
