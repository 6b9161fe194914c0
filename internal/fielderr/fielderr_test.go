package fielderr

import "testing"

// A list reads as the place it is printed to: problems in files one per line (the commands'
// stderr), problems at objects on one line (a pool condition's message).
func TestErrorsJoinByWhereTheyAre(t *testing.T) {
	inFiles := Errors{{File: "a.yaml", Document: 1, Reason: "r"}, {File: "b.yaml", Field: "spec.x", Line: 3, Reason: "s"}}
	if got, want := inFiles.Error(), "a.yaml:1: r\nb.yaml: spec.x (line 3): s"; got != want {
		t.Errorf("in files: %q, want %q", got, want)
	}
	atObjects := Errors{{MachineConfig: "99-x", Field: "spec.kernelType", Reason: "unknown"}, {Reason: "pool worker: too big"}}
	if got, want := atObjects.Error(), `MachineConfig "99-x": spec.kernelType: unknown; pool worker: too big`; got != want {
		t.Errorf("at objects: %q, want %q", got, want)
	}
	if Errors(nil).OrNil() != nil {
		t.Error("an empty list is a non-nil error")
	}
}
