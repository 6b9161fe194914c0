package testenv

import (
	"strings"
	"testing"
)

func TestMissingBinaryNamesMakeTools(t *testing.T) {
	t.Setenv(ToolsDirEnv, t.TempDir())
	_, err := Start()
	if err == nil {
		t.Fatal("Start succeeded without binaries")
	}
	if !strings.Contains(err.Error(), "make tools") || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Fatalf("error does not tell how to fix it: %v", err)
	}
}

func TestToolsDirHoldsEveryBinary(t *testing.T) {
	for _, bin := range append(RequiredBinaries, "ignition", "ignition-validate") {
		RequireTool(t, bin)
	}
}
