package manifest

import (
	"strings"
	"testing"
)

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		paths []string
		opts  Options
		want  []string // every error, in order
	}{{
		name:  "unknown field, with its line in a later document",
		files: map[string]string{"a.yaml": workerMC + "---\n" + strings.Replace(infraPool, "spec:\n", "spec:\n  maxUnavalable: 1\n", 1)},
		want:  []string{"a.yaml:2: spec.maxUnavalable (line 18 col 3): unknown field"},
	}, {
		name:  "unknown field inside a list element",
		files: map[string]string{"a.yaml": strings.Replace(infraPool, "operator: In", "operatr: In", 1)},
		want:  []string{"a.yaml:1: spec.machineConfigSelector.matchExpressions[0].operatr (line 8 col 55): unknown field"},
	}, {
		name:  "duplicate key",
		files: map[string]string{"a.yaml": workerMC + "  fips: true\n  fips: false\n"},
		want:  []string{`a.yaml:1: spec.fips (line 13 col 3): invalid YAML: key "fips" is given more than once`},
	}, {
		name:  "YAML syntax error in the second document points at the file line",
		files: map[string]string{"a.yaml": workerMC + "---\nkind: MachineConfig\nmetadata:\n  name: [oops\n"},
		want:  []string{"a.yaml:2: (line 15): invalid YAML: did not find expected ',' or ']'"},
	}, {
		name:  "wrong type",
		files: map[string]string{"a.yaml": workerMC + "  fips: \"yes\"\n"},
		want:  []string{"a.yaml:1: spec.fips (line 12 col 3): got a string, want a boolean (true or false)"},
	}, {
		name: "kind missing, kind unknown, wrong apiVersion, name missing, not an object: all reported",
		files: map[string]string{"a.yaml": "apiVersion: v1\nmetadata: {name: x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n" +
			strings.Replace(workerMC, "openshift.io/v1", "openshift.io/v2", 1) + "---\n" +
			strings.Replace(infraPool, "name: infra", "name: Infra_Pool", 1) + "---\n- just\n- a list\n"},
		want: []string{
			"a.yaml:1: kind (line 1 col 1): missing (want MachineConfig or MachineConfigPool)",
			"a.yaml:2: kind (line 5 col 1): ConfigMap is not supported (want MachineConfig, MachineConfigPool or a List of them)",
			`a.yaml:3: apiVersion (line 8 col 1): "machineconfiguration.openshift.io/v2" is not supported for MachineConfig (want machineconfiguration.openshift.io/v1)`,
			`a.yaml:4: metadata.name (line 23 col 3): "Infra_Pool" is not a valid name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			"a.yaml:5: (line 32 col 1): not an object (want a MachineConfig, a MachineConfigPool or a Butane config)",
		},
	}, {
		name:  "bad List item is located under items",
		files: map[string]string{"list.yaml": "apiVersion: v1\nkind: List\nitems:\n" + indent(workerMC, "  - ", "    ") + indent(strings.Replace(infraPool, "spec:", "spec:\n  bogus: 1", 1), "  - ", "    ")},
		want:  []string{"list.yaml:1: items.1.spec.bogus (line 20 col 7): unknown field"},
	}, {
		name:  "duplicate MachineConfig names across files name both places",
		files: map[string]string{"a.yaml": workerMC, "b/c.json": `{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig",` + "\n" + `"metadata":{"name":"99-worker-motd"}}`},
		paths: []string{"a.yaml", "b"},
		want:  []string{`b/c.json:1: metadata.name (line 2 col 13): MachineConfig "99-worker-motd" is also defined at a.yaml:1`},
	}, {
		name:  "duplicate pool names",
		files: map[string]string{"a.yaml": infraPool + "---\n" + infraPool},
		want:  []string{`a.yaml:2: metadata.name (line 16 col 3): MachineConfigPool "infra" is also defined at a.yaml:1`},
	}, {
		name:  "JSON syntax error has line and column",
		files: map[string]string{"a.json": "{\"kind\": \"MachineConfig\",\n  \"metadata\": {\"name\": \"x\",}}"},
		want:  []string{"a.json:1: (line 2 col 28): invalid JSON: invalid character '}' looking for beginning of object key string"},
	}, {
		name:  "Butane error keeps its line, shifted to the document's place in the file",
		files: map[string]string{"a.yaml": workerMC + "---\n" + strings.Replace(openshiftButane, "    machineconfiguration.openshift.io/role: worker\n", "", 1)},
		want:  []string{"a.yaml:2: metadata.labels (line 17 col 10): machineconfiguration.openshift.io/role label is required"},
	}, {
		name:  "Butane warnings are errors",
		files: map[string]string{"x.bu": strings.Replace(fcosButane, "    - name: core\n", "    - name: core\n      shel: /bin/zsh\n", 1)},
		want:  []string{"x.bu:1: passwd.users.0.shel (line 6 col 7): unused key shel (a Butane warning; mco treats warnings as errors)"},
	}, {
		name:  "Butane decimal mode",
		files: map[string]string{"x.bu": strings.Replace(openshiftButane, "0644", "644", 1)},
		want: []string{
			"x.bu:1: storage.files.0.mode (line 12 col 13): unreasonable mode would be reasonable if specified in octal; remember to add a leading zero (a Butane warning; mco treats warnings as errors)",
			"x.bu:1: storage.files.0.mode (line 12 col 13): special mode bits are not supported in this spec version",
		},
	}, {
		name:  "Butane unknown version",
		files: map[string]string{"x.bu": "variant: fcos\nversion: 9.0.0\n"},
		want:  []string{"x.bu:1: version: No translator exists for variant fcos with version 9.0.0"},
	}, {
		name:  "YAML syntax error in a Butane file (after a comment-only document)",
		files: map[string]string{"x.bu": "# header\n---\nvariant: fcos\nversion: 1.6.0\nstorage: [\n"},
		want:  []string{"x.bu:2: (line 5): invalid YAML: did not find expected node content"},
	}, {
		name:  "fcos newer than Ignition 3.5",
		files: map[string]string{"x.bu": "variant: fcos\nversion: 1.7.0\n"},
		want:  []string{"x.bu:1: version: this fcos version produces Ignition spec 3.6.0; MachineConfigs carry at most 3.5.0 (fcos 1.6.0)"},
	}, {
		name:  "unsupported variant",
		files: map[string]string{"x.bu": "variant: flatcar\nversion: 1.1.0\n"},
		want:  []string{`x.bu:1: variant (line 1 col 1): "flatcar" is not supported (want fcos or openshift)`},
	}, {
		name:  ".bu document without variant",
		files: map[string]string{"x.bu": workerMC},
		want:  []string{"x.bu:1: variant (line 1 col 1): missing: a .bu file holds Butane configs (variant fcos or openshift)"},
	}, {
		name:  "fcos file name is not a MachineConfig name",
		files: map[string]string{"My_SSH.bu": fcosButane},
		want:  []string{`My_SSH.bu:1: an fcos config becomes a MachineConfig named after its file, and "My_SSH" is not a valid name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'); rename the file or use variant openshift with metadata.name`},
	}, {
		name:  "two fcos configs in one file collide on the file's name",
		files: map[string]string{"ssh.bu": fcosButane + "---\n" + fcosButane},
		want:  []string{`ssh.bu:2: metadata.name: MachineConfig "ssh" is also defined at ssh.bu:1 (in the MachineConfig translated from Butane)`},
	}, {
		name:  "paths that are missing or not manifests",
		files: map[string]string{"notes.txt": "x", "empty/README": "x"},
		paths: []string{"missing.yaml", "notes.txt", "empty"},
		want: []string{
			"missing.yaml: no such file or directory",
			"notes.txt: not a manifest file (want .yaml, .yml, .json or .bu)",
		},
	}, {
		name:  "a directory without manifests",
		files: map[string]string{"empty/README": "x"},
		paths: []string{"empty"},
		want:  []string{"empty: no manifest files found (want .yaml, .yml, .json or .bu)"},
	}, {
		name:  "bad separator line",
		files: map[string]string{"a.yaml": workerMC + "--- kind: x\n"},
		want:  []string{"a.yaml:1: (line 12): invalid Yaml document separator: kind: x"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeTree(t, tt.files)
			paths := tt.paths
			if paths == nil {
				for name := range tt.files {
					paths = append(paths, name)
				}
			}
			_, err := Load(tt.opts, paths...)
			if err == nil {
				t.Fatal("Load succeeded, want errors")
			}
			if got, want := err.Error(), strings.Join(tt.want, "\n"); got != want {
				t.Errorf("errors:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{File: "f", Reason: "r"}, "f: r"},
		{Error{File: "f", Document: 2, Reason: "r"}, "f:2: r"},
		{Error{File: "f", Document: 2, Field: "spec.x", Reason: "r"}, "f:2: spec.x: r"},
		{Error{File: "f", Document: 2, Field: "spec.x", Line: 3, Column: 4, Reason: "r"}, "f:2: spec.x (line 3 col 4): r"},
		{Error{File: "f", Document: 1, Line: 3, Reason: "r"}, "f:1: (line 3): r"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%+v formats as %q, want %q", tt.err, got, tt.want)
		}
	}
}
