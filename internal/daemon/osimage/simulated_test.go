package osimage

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimulatedRecordsStagedChanges(t *testing.T) {
	root := t.TempDir()
	b := Simulated{Root: root}
	if !b.Supports("kernelArguments") || !b.Supports("osImageURL") {
		t.Fatal("the simulated backend takes every OS change")
	}
	if err := b.Stage(context.Background(), Change{KernelArgs: true, NewKernelArgs: []string{"audit=1"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Stage(context.Background(), Change{OSImageURL: "quay.io/example/os@sha256:1"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, SimulatedStatePath))
	if err != nil {
		t.Fatal(err)
	}
	var st SimulatedState
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	if st.OSImageURL != "quay.io/example/os@sha256:1" || strings.Join(st.KernelArguments, " ") != "audit=1" {
		t.Fatalf("recorded %+v", st)
	}
}
