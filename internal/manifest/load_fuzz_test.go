package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/internal/ignition"
)

// loadBytes writes data to a fresh directory as name and loads it, as `mco render` would.
func loadBytes(t *testing.T, name string, data []byte) (string, *Set, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := Load(Options{FCOSRole: "worker"}, path)
	return path, set, err
}

// checkErrors asserts every problem Load reports names the file, a reason, and a document and
// line that exist in it.
func checkErrors(t *testing.T, path string, data []byte, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var errs Errors
	if !errors.As(err, &errs) || len(errs) == 0 {
		t.Fatalf("Load: error %T %v is not a list of problems", err, err)
	}
	// YAML breaks lines at a lone "\r" too (old Mac line ends), and so do its positions.
	lines := bytes.Count(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\n")) +
		bytes.Count(bytes.ReplaceAll(data, []byte("\r\n"), nil), []byte("\r")) + 1
	for _, e := range errs {
		if e.File != path || e.Reason == "" || e.Document < 0 || e.Line < 0 || e.Line > lines || e.Column < 0 {
			t.Fatalf("Load(%q): problem does not name file, document, line (of %d) and reason: %#v", data, lines, e)
		}
	}
}

// checkObjects asserts what loaded is what the API server would take: valid, unique names, and
// MachineConfigs of the right group version.
func checkObjects(t *testing.T, data []byte, set *Set) {
	t.Helper()
	names := map[string]bool{}
	for _, mc := range set.MachineConfigs {
		if reason := nameProblem(mc.Name); reason != "" || names["mc/"+mc.Name] {
			t.Fatalf("Load(%q) loaded MachineConfig %q: %s (or a duplicate)", data, mc.Name, reason)
		}
		names["mc/"+mc.Name] = true
		if mc.APIVersion != apiVersion || mc.Kind != kindMachineConfig {
			t.Fatalf("Load(%q) loaded MachineConfig %q as %s %s", data, mc.Name, mc.APIVersion, mc.Kind)
		}
		if _, ok := set.MachineConfigSource(mc.Name); !ok {
			t.Fatalf("Load(%q): MachineConfig %q has no source", data, mc.Name)
		}
	}
	for _, p := range set.Pools {
		if reason := nameProblem(p.Name); reason != "" || names["pool/"+p.Name] {
			t.Fatalf("Load(%q) loaded pool %q: %s (or a duplicate)", data, p.Name, reason)
		}
		names["pool/"+p.Name] = true
		if _, ok := set.PoolSource(p.Name); !ok {
			t.Fatalf("Load(%q): pool %q has no source", data, p.Name)
		}
	}
}

// canonicalRaw rewrites each MachineConfig's spec.config as key-sorted JSON: YAML and JSON
// spell the same config with different bytes, and only its meaning has to survive.
func canonicalRaw(t *testing.T, mcs []*mcfgv1.MachineConfig) []*mcfgv1.MachineConfig {
	t.Helper()
	out := make([]*mcfgv1.MachineConfig, len(mcs))
	for i, mc := range mcs {
		mc = mc.DeepCopy()
		if len(mc.Spec.Config.Raw) > 0 {
			var v any
			if err := json.Unmarshal(mc.Spec.Config.Raw, &v); err != nil {
				t.Fatalf("MachineConfig %q: spec.config %q is not JSON: %v", mc.Name, mc.Spec.Config.Raw, err)
			}
			mc.Spec.Config.Raw, _ = json.Marshal(v)
		}
		out[i] = mc
	}
	return out
}

// FuzzManifestDecode loads any file as a YAML (or JSON stream) manifest. Problems name the file,
// a document and a line that exist; whatever loads has valid, unique names; and what loads,
// written back as YAML, loads again to the same objects without a problem.
//
// Seeds: the f.Add ones and testdata/fuzz/FuzzManifestDecode (the repository's examples,
// config/pools, cmd/mco/testdata manifests, valid and invalid).
func FuzzManifestDecode(f *testing.F) {
	f.Add([]byte(workerMC), false)
	f.Add([]byte(infraPool), false)
	f.Add([]byte(workerMC+"---\n"+infraPool), false)
	f.Add([]byte("# only a comment\n---\n---\n"), false)
	f.Add([]byte(`{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"a"}} {"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfigPool","metadata":{"name":"p"}}`), true)
	f.Add([]byte(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"a"},"spec":{"config":{"ignition":{"version":"3.5.0"}}}}]}`), true)
	f.Add([]byte("kind: MachineConfig\nmetadata:\n  name: Bad_Name\nspec:\n  bogus: 1\n  config: {a: 1, a: 2}\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, asJSON bool) {
		name := "m.yaml"
		if asJSON {
			name = "m.json"
		}
		path, set, err := loadBytes(t, name, data)
		checkErrors(t, path, data, err)
		checkObjects(t, data, set)
		if len(set.MachineConfigs)+len(set.Pools) == 0 {
			return
		}
		var out bytes.Buffer
		for _, obj := range append(asObjects(set.MachineConfigs), asObjects(set.Pools)...) {
			y, err := yaml.Marshal(obj)
			if err != nil {
				t.Fatalf("Load(%q) loaded an object that does not serialise: %v", data, err)
			}
			out.WriteString("---\n")
			out.Write(y)
		}
		_, again, err := loadBytes(t, "again.yaml", out.Bytes())
		if err != nil {
			t.Fatalf("Load(%q) loaded objects that, written back as\n%s\ndo not load: %v", data, out.Bytes(), err)
		}
		// Compared as JSON, as the API server would store them: an empty list and an absent one
		// are the same.
		if objectsJSON(t, canonicalRaw(t, again.MachineConfigs), again.Pools) != objectsJSON(t, canonicalRaw(t, set.MachineConfigs), set.Pools) {
			t.Fatalf("Load(%q) is not stable through YAML:\n%s", data, out.Bytes())
		}
	})
}

func objectsJSON(t *testing.T, objs ...any) string {
	t.Helper()
	js, err := json.Marshal(objs)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

func asObjects[T any](objs []T) []any {
	out := make([]any, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

// FuzzButane loads any document as a .bu file. What loads is one MachineConfig whose config
// parses as Ignition (Butane's output validates); a `local:` file outside the Butane file's directory is never read.
//
// Seeds: the f.Add ones and testdata/fuzz/FuzzButane (cmd/mco/testdata's Butane configs, fcos
// and openshift, valid and invalid).
func FuzzButane(f *testing.F) {
	f.Add([]byte(openshiftButane))
	f.Add([]byte("variant: fcos\nversion: 1.5.0\npasswd:\n  users:\n    - name: core\n      ssh_authorized_keys: [ssh-ed25519 AAAA a@b]\n"))
	f.Add([]byte("variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: /etc/x\n      contents:\n        local: ../secret.txt\n"))
	f.Add([]byte("variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: /etc/x\n      contents:\n        local: inside.txt\n"))
	f.Add([]byte("variant: fcos\nversion: 1.6.0\nstorage:\n  trees:\n    - local: .\n      path: /etc/tree\n"))
	f.Add([]byte("variant: openshift\nversion: 4.22.0\nmetadata:\n  name: x\nopenshift:\n  kernel_arguments: [quiet]\n  extensions: [usbguard]\n"))
	const secret = "mcofuzzsecretQ2v7Zx9LkP4wR8tYb3NcH6jD1sF5gA0eU"
	f.Fuzz(func(t *testing.T, data []byte) {
		top := t.TempDir()
		dir := filepath.Join(top, "manifests")
		for p, content := range map[string]string{
			filepath.Join(top, "secret.txt"): secret,
			filepath.Join(dir, "inside.txt"): "inside\n",
		} {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, "99-fuzz.bu")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		set, err := Load(Options{FCOSRole: "worker"}, path)
		checkErrors(t, path, data, err)
		checkObjects(t, data, set)
		if len(set.Pools) > 0 {
			t.Fatalf("Load(%q): a Butane file gave pools", data)
		}
		for _, mc := range set.MachineConfigs {
			src, _ := set.MachineConfigSource(mc.Name)
			if !src.FromButane {
				t.Fatalf("Load(%q): MachineConfig %q from a .bu file is not marked as Butane's", data, mc.Name)
			}
			cfg, err := ignition.Parse(mc.Spec.Config.Raw)
			if err != nil {
				t.Fatalf("Load(%q): Butane produced Ignition %s that does not parse: %v", data, mc.Spec.Config.Raw, err)
			}
			js, _ := json.Marshal(cfg)
			if strings.Contains(string(js), secret) || strings.Contains(string(mc.Spec.Config.Raw), "bWNvZnV6enNlY3JldF") {
				t.Fatalf("Load(%q): a file outside the Butane file's directory was read", data)
			}
		}
	})
}
