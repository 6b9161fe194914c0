package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/manifest"
)

const mcHeader = "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: 99-worker-x\n  labels:\n    machineconfiguration.openshift.io/role: worker\n"

// manifestCases give bad manifest files to manifest.Load (what `mco render`, `mco validate`
// and the server's from-dir mode read): the error names the file and document, the field and
// the reason, and the bad document yields no object.
func manifestCases() []hostileCase {
	rows := []struct{ name, file, content, field, reason string }{
		{"unknown kind", "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 99-worker-x\n", "kind", "ConfigMap is not supported"},
		{"missing kind", "nokind.yaml", "apiVersion: machineconfiguration.openshift.io/v1\nmetadata:\n  name: x\n", "kind", "missing"},
		{"wrong apiVersion", "v2.yaml", strings.Replace(mcHeader, "/v1", "/v2", 1) + "spec: {}\n", "apiVersion", `"machineconfiguration.openshift.io/v2" is not supported for MachineConfig`},
		{"YAML key given twice", "dup.yaml", mcHeader + "spec:\n  fips: false\n  fips: true\n", "spec.fips", `key "fips" is given more than once`},
		{"unknown field", "unknown.yaml", mcHeader + "spec:\n  kernelArgs: [nosmt]\n", "spec.kernelArgs", "unknown field"},
		{"field of the wrong type", "type.yaml", mcHeader + "spec:\n  kernelArguments: nosmt\n", "spec.kernelArguments", "got a string, want a list"},
		{"name that is no DNS name", "name.yaml", strings.Replace(mcHeader, "99-worker-x", "../etc/x", 1) + "spec: {}\n", "metadata.name", "is not a valid name"},
		{"a bad item in a List", "list.yaml", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: x}\n", "items.0.kind", "Secret is not supported"},
		{"nesting past the YAML limit", "deep.yaml", mcHeader + "spec:\n  config: " + strings.Repeat("[", 20_000) + "\n", "", "exceeded max depth"},
		{"Butane with a relative path", "rel.bu", "variant: fcos\nversion: 1.6.0\nstorage:\n  files:\n    - path: etc/x\n", "storage.files.0.path", "path not absolute"},
		{"Butane unknown key", "key.bu", "variant: fcos\nversion: 1.6.0\nstorage:\n  filez: []\n", "storage.filez", "unused key filez"},
		{"Butane local file outside its directory", "local.bu", "variant: fcos\nversion: 1.6.0\nstorage:\n  files:\n    - path: /etc/x\n      contents:\n        local: ../../../etc/shadow\n",
			"storage.files.0.contents.local", "traverses outside the files directory"},
		{"Butane unknown version", "version.bu", "variant: fcos\nversion: 9.9.9\n", "version", "No translator exists for variant fcos with version 9.9.9"},
		{"Butane unknown variant", "variant.bu", "variant: flatcar\nversion: 1.1.0\n", "variant", `"flatcar" is not supported`},
	}
	var cases []hostileCase
	for _, r := range rows {
		want := []string{r.file + ":1: ", r.reason}
		if r.field != "" {
			want = append(want, ": "+r.field)
		}
		cases = append(cases, hostileCase{
			entry: "manifest.Load", name: r.name, want: want,
			run: func(t *testing.T) error {
				dir := t.TempDir()
				t.Chdir(dir)
				must(t, os.WriteFile(filepath.Join(dir, r.file), []byte(r.content), 0o644))
				set, err := manifest.Load(manifest.Options{FCOSRole: "worker"}, r.file)
				if set != nil && (len(set.MachineConfigs) > 0 || len(set.Pools) > 0) {
					t.Errorf("the bad document still loaded %d MachineConfigs and %d pools", len(set.MachineConfigs), len(set.Pools))
				}
				return err
			},
		})
	}
	return cases
}
