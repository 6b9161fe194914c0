package render

import (
	"errors"
	"testing"

	"github.com/mco-dev/mco/internal/ignition"
)

// Positions travel in Line and Column, not in Reason, so a caller that knows the manifest
// file can replace them without parsing text.
func TestConfigErrorsKeepPositionOutOfReason(t *testing.T) {
	_, err := ignition.Parse([]byte("{\n\"ignition\":{\"version\":\"3.5.0\"},\n\"storage\":{\"files\":[{\"path\":\"etc/x\"}]}}"))
	if err == nil {
		t.Fatal("parsed")
	}
	errs := configErrors("99-x", err)
	if len(errs) != 1 {
		t.Fatalf("got %d errors, want 1: %v", len(errs), errs)
	}
	e := errs[0]
	if e.Field != "spec.config.storage.files.0.path" || e.Line != 3 || e.Column == 0 {
		t.Errorf("field %q line %d col %d, want spec.config.storage.files.0.path at line 3", e.Field, e.Line, e.Column)
	}
	var ce *ignition.ConfigError
	if !errors.As(err, &ce) || e.Reason != ce.Problems[0].Reason {
		t.Errorf("reason %q, want Ignition's %q unchanged", e.Reason, ce.Problems[0].Reason)
	}
}

func TestErrorPrintsPosition(t *testing.T) {
	for _, tc := range []struct {
		err  Error
		want string
	}{
		{Error{MachineConfig: "99-x", Field: "spec.config.storage.files.0.path", Reason: "path not absolute", Line: 3, Column: 22},
			`MachineConfig "99-x": spec.config.storage.files.0.path: path not absolute (line 3 col 22)`},
		{Error{MachineConfig: "99-x", Field: "spec.kernelType", Reason: "unknown"},
			`MachineConfig "99-x": spec.kernelType: unknown`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
