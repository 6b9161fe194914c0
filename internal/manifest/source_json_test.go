package manifest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestSourceJSON(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("a.yaml", `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata: {name: doc}
spec: {kernelArguments: [a]}
---
apiVersion: v1
kind: List
items:
- apiVersion: machineconfiguration.openshift.io/v1
  kind: MachineConfig
  metadata: {name: first}
- apiVersion: machineconfiguration.openshift.io/v1
  kind: MachineConfig
  metadata: {name: second}
  spec: {fips: false}
`)
	write("b.bu", "variant: fcos\nversion: 1.5.0\n")
	set, err := Load(Options{FCOSRole: "worker"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"doc":    `{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"doc"},"spec":{"kernelArguments":["a"]}}`,
		"first":  `{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"first"}}`,
		"second": `{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"second"},"spec":{"fips":false}}`,
	} {
		src, ok := set.MachineConfigSource(name)
		if !ok {
			t.Fatalf("no source for %s", name)
		}
		js, ok := src.JSON()
		if !ok || !sameJSON(t, js, want) {
			t.Errorf("%s: JSON %s (%v), want %s: only the fields the file wrote", name, js, ok, want)
		}
	}
	for _, mc := range set.MachineConfigs {
		if src, _ := set.MachineConfigSource(mc.Name); src.FromButane {
			if _, ok := src.JSON(); ok {
				t.Errorf("%s from Butane has JSON", mc.Name)
			}
		}
	}
}

func sameJSON(t *testing.T, a []byte, b string) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}
