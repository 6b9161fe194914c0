package generatedmc

import "testing"

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
	got, ok := KubeletNames.NewestFinalizer("worker", []string{"99-worker-generated-kubelet", "99-worker-generated-kubelet-2",
		"99-worker-generated-kubelet-7", "99-master-generated-kubelet-8", "foreground"}, func(n string) bool { return exists[n] })
	if !ok || got != "99-worker-generated-kubelet-2" {
		t.Errorf("NewestFinalizer = %q, %v; want the existing one with the largest suffix", got, ok)
	}
	if _, ok := KubeletNames.NewestFinalizer("worker", []string{"99-worker-generated-kubelet-7"}, func(string) bool { return false }); ok {
		t.Error("a finalizer naming a missing MachineConfig counted")
	}
}
