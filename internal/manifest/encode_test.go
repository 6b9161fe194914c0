package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestJSONToYAMLAsSigsYAML holds JSONToYAML to sigs.k8s.io/yaml's output, byte for byte, on the
// scalars and shapes a MachineConfig and its Ignition hold and on the edges of numbers.
func TestJSONToYAMLAsSigsYAML(t *testing.T) {
	docs := []string{
		`{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"rendered-worker-0123","annotations":{"a/b":"3.5.0"}},"spec":{"config":{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"/etc/x","mode":420,"overwrite":true,"contents":{"source":"data:,a%20b%0A"}}]},"systemd":{"units":[{"name":"a.service","enabled":false,"contents":"[Unit]\nDescription=x\n\n[Service]\nExecStart=/bin/true\n"}]}},"kernelArguments":["a=b","c"],"osImageURL":""}}`,
		`{"n":[0,-1,1.5,1e3,1E-7,12345678901234567890,9223372036854775807,-9223372036854775808,0.1,100000000000000000000000]}`,
		`{"s":["","yes","no","on","off","true","null","~","0x1F","0o17","017","1_000","1:20","-",".5","+1",".inf","-.Inf",".NaN","2001-12-14","a: b","#c","'q'","\"d\"","tab\there","ü ß 日本","\u0000\u0007\u001f","trailing ","  lead","multi\nline\n","multi\nline no end","x\r\ny"]}`,
		`{"z":null,"b":[true,false],"e":{},"l":[],"nested":[[1,[2,[3]]],{"k":{"k":{"k":"v"}}}],"B":"upper","a":"lower","_":"under","10":"ten","9":"nine"}`,
		`[1,"two",{"three":3}]`,
		`"just a string"`,
		`42`,
	}
	// `mco render --pool worker -o json examples/`
	j, err := os.ReadFile("testdata/encode/rendered.json")
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, string(j))
	for _, doc := range docs {
		want, err := yaml.JSONToYAML([]byte(doc))
		if err != nil {
			t.Fatalf("sigs.k8s.io/yaml: %v", err)
		}
		got, err := JSONToYAML([]byte(doc))
		if err != nil {
			t.Fatalf("JSONToYAML(%.80s): %v", doc, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("JSONToYAML(%.80s):\n got %q\nwant %q", doc, got, want)
		}
	}
}

// largeRendered is a rendered config's JSON with files files, as a pool of many MachineConfigs
// renders (bench/render's workload).
func largeRendered(b testing.TB, files int) []byte {
	type file struct {
		Path     string `json:"path"`
		Mode     int    `json:"mode"`
		Contents struct {
			Source string `json:"source"`
		} `json:"contents"`
	}
	fs := make([]file, files)
	for i := range fs {
		fs[i].Path, fs[i].Mode = fmt.Sprintf("/etc/bench/%03d/file-%03d.conf", i/20, i%20), 0o644
		fs[i].Contents.Source = "data:," + url.PathEscape(fmt.Sprintf("# bench file %d\nkey=%d\n", i, i))
	}
	j, err := json.Marshal(map[string]any{"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
		"spec": map[string]any{"config": map[string]any{"ignition": map[string]any{"version": "3.5.0"}, "storage": map[string]any{"files": fs}}}})
	if err != nil {
		b.Fatal(err)
	}
	return j
}

func BenchmarkJSONToYAML(b *testing.B) {
	j := largeRendered(b, 4000)
	b.Run("manifest", func(b *testing.B) {
		for b.Loop() {
			if _, err := JSONToYAML(j); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sigs.k8s.io-yaml", func(b *testing.B) {
		for b.Loop() {
			if _, err := yaml.JSONToYAML(j); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestJSONToYAMLInParts holds the encoding in parts to the one-pass encoding, byte for byte, on
// documents long enough to be split: a rendered config's files at several depths, and lists
// whose strings have spaces (which the encoder may fold, so they are never split).
func TestJSONToYAMLInParts(t *testing.T) {
	big := largeRendered(t, 1000)
	var doc map[string]any
	if err := json.Unmarshal(big, &doc); err != nil {
		t.Fatal(err)
	}
	files := doc["spec"].(map[string]any)["config"].(map[string]any)["storage"].(map[string]any)["files"].([]any)
	withSpaces := slices.Clone(files)
	withSpaces[500] = map[string]any{"path": "/etc/a file with spaces that is long enough to be folded by the encoder past column eighty", "mode": 420}
	placeholder := slices.Clone(files)
	placeholder[3] = map[string]any{"path": "mco-split-list-placeholder"}
	cases := map[string]any{
		"rendered":             doc,
		"top-level":            map[string]any{"files": files, "a": 1, "z": []any{"x"}},
		"deep":                 map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"files": files}}}},
		"spaces":               map[string]any{"files": withSpaces},
		"placeholder inside":   map[string]any{"files": placeholder},
		"two lists":            map[string]any{"files": files, "more": files[:300]},
		"first key of an item": map[string]any{"items": []any{map[string]any{"files": files, "z": 1}}},
		"in nested items":      []any{[]any{map[string]any{"a": map[string]any{"files": files}}}},
	}
	for name, c := range cases {
		j, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		want, err := yaml.JSONToYAML(j)
		if err != nil {
			t.Fatal(err)
		}
		got, err := JSONToYAML(j)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: differs from sigs.k8s.io/yaml (%d bytes against %d)", name, len(got), len(want))
		}
	}
	var v any
	if err := json.Unmarshal(big, &v); err != nil {
		t.Fatal(err)
	}
	if _, split, err := marshalSplit(yamlNumbers(v)); err != nil || !split && runtime.GOMAXPROCS(0) > 1 {
		t.Errorf("a rendered config's files were not encoded in parts (%v): the test compares nothing", err)
	}
}
