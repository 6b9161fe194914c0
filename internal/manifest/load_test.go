package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
)

// writeTree creates files (path → content) in a fresh directory and makes it the working
// directory, so error messages name the short relative paths the tests expect.
func writeTree(t *testing.T, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
}

const workerMC = `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: 99-worker-motd
  labels:
    machineconfiguration.openshift.io/role: worker
spec:
  config:
    ignition:
      version: 3.5.0
  kernelArguments: [nosmt]
`

const infraPool = `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfigPool
metadata:
  name: infra
spec:
  machineConfigSelector:
    matchExpressions:
      - {key: machineconfiguration.openshift.io/role, operator: In, values: [worker, infra]}
  nodeSelector:
    matchLabels:
      node-role.kubernetes.io/infra: ""
`

const openshiftButane = `variant: openshift
version: 4.22.0
metadata:
  name: 99-worker-chrony
  labels:
    machineconfiguration.openshift.io/role: worker
openshift:
  kernel_arguments: [loglevel=7]
storage:
  files:
    - path: /etc/chrony.conf
      mode: 0644
      contents:
        inline: pool 0.rhel.pool.ntp.org iburst
`

const fcosButane = `variant: fcos
version: 1.6.0
passwd:
  users:
    - name: core
      ssh_authorized_keys: [ssh-ed25519 AAAA admin]
`

// loaded is a compact view of a Set: "kind/name@file:doc" in load order.
func loaded(s *Set) []string {
	var out []string
	for _, mc := range s.MachineConfigs {
		src, _ := s.MachineConfigSource(mc.Name)
		out = append(out, "mc/"+mc.Name+"@"+src.String())
	}
	for _, p := range s.Pools {
		src, _ := s.PoolSource(p.Name)
		out = append(out, "pool/"+p.Name+"@"+src.String())
	}
	return out
}

func TestLoadAccepts(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		paths []string
		want  []string
	}{{
		name:  "multi-document YAML, leading separator and comment-only document keep numbering",
		files: map[string]string{"all.yaml": "---\n" + workerMC + "---\n# just a comment\n---\n" + infraPool},
		paths: []string{"all.yaml"},
		want:  []string{"mc/99-worker-motd@all.yaml:1", "pool/infra@all.yaml:3"},
	}, {
		name:  "CRLF line endings",
		files: map[string]string{"crlf.yml": strings.ReplaceAll(workerMC+"---\n"+infraPool, "\n", "\r\n")},
		paths: []string{"crlf.yml"},
		want:  []string{"mc/99-worker-motd@crlf.yml:1", "pool/infra@crlf.yml:2"},
	}, {
		name: "JSON stream of two values",
		files: map[string]string{"two.json": `{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"a"}}
{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"b"},"spec":{"fips":true}}`},
		paths: []string{"two.json"},
		want:  []string{"mc/a@two.json:1", "mc/b@two.json:2"},
	}, {
		name: "directory walked recursively in lexical order, hidden entries and other files ignored",
		files: map[string]string{
			"dir/b.yaml":         workerMC,
			"dir/a/pool.yml":     infraPool,
			"dir/.git/x.yaml":    "not: [valid",
			"dir/.hidden.yaml":   "not: [valid",
			"dir/README.md":      "# not a manifest",
			"dir/sub/ssh.bu":     fcosButane,
			"dir/sub/chrony.bu":  openshiftButane,
			"dir/sub/notes.txt":  "ignored",
			"dir/sub/empty.yaml": "",
		},
		paths: []string{"dir"},
		want:  []string{"mc/99-worker-motd@dir/b.yaml:1", "mc/99-worker-chrony@dir/sub/chrony.bu:1", "mc/ssh@dir/sub/ssh.bu:1", "pool/infra@dir/a/pool.yml:1"},
	}, {
		name: "List from kubectl get -o yaml",
		files: map[string]string{"list.yaml": "apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: \"\"\nitems:\n" +
			indent(workerMC, "  - ", "    ") + indent(infraPool, "  - ", "    ")},
		paths: []string{"list.yaml"},
		want:  []string{"mc/99-worker-motd@list.yaml:1", "pool/infra@list.yaml:1"},
	}, {
		name:  "Butane in a .yaml file is recognised by its variant",
		files: map[string]string{"mixed.yaml": workerMC + "---\n" + openshiftButane},
		paths: []string{"mixed.yaml"},
		want:  []string{"mc/99-worker-motd@mixed.yaml:1", "mc/99-worker-chrony@mixed.yaml:2"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeTree(t, tt.files)
			set, err := Load(Options{}, tt.paths...)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got := strings.Join(loaded(set), "\n"); got != strings.Join(tt.want, "\n") {
				t.Errorf("loaded:\n%s\nwant:\n%s", got, strings.Join(tt.want, "\n"))
			}
		})
	}
}

// indent makes a YAML document a list item: first line after first, the rest after rest.
func indent(doc, first, rest string) string {
	lines := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestButaneOpenShiftBecomesMachineConfig(t *testing.T) {
	writeTree(t, map[string]string{"chrony.bu": openshiftButane})
	set, err := Load(Options{FCOSRole: "infra"}, "chrony.bu")
	if err != nil {
		t.Fatal(err)
	}
	mc := onlyMC(t, set)
	if mc.Name != "99-worker-chrony" || mc.Labels["machineconfiguration.openshift.io/role"] != "worker" {
		t.Errorf("metadata from the Butane config not kept (FCOSRole must not apply): %+v", mc.ObjectMeta)
	}
	if mc.APIVersion != "machineconfiguration.openshift.io/v1" || mc.Kind != "MachineConfig" {
		t.Errorf("TypeMeta = %+v", mc.TypeMeta)
	}
	if strings.Join(mc.Spec.KernelArguments, " ") != "loglevel=7" {
		t.Errorf("kernelArguments = %q", mc.Spec.KernelArguments)
	}
	raw := string(mc.Spec.Config.Raw)
	for _, want := range []string{`"version":"3.5.0"`, `"path":"/etc/chrony.conf"`, `"mode":420`, `data:,pool%200.rhel.pool.ntp.org%20iburst`} {
		if !strings.Contains(raw, want) {
			t.Errorf("spec.config lacks %s:\n%s", want, raw)
		}
	}
}

func TestButaneFCOSBecomesMachineConfigNamedAfterFile(t *testing.T) {
	for _, role := range []string{"worker", ""} {
		t.Run("role="+role, func(t *testing.T) {
			writeTree(t, map[string]string{"99-core-ssh.bu": fcosButane})
			set, err := Load(Options{FCOSRole: role}, "99-core-ssh.bu")
			if err != nil {
				t.Fatal(err)
			}
			mc := onlyMC(t, set)
			if mc.Name != "99-core-ssh" || mc.Kind != "MachineConfig" {
				t.Errorf("name/kind = %q/%q", mc.Name, mc.Kind)
			}
			if got := mc.Labels["machineconfiguration.openshift.io/role"]; got != role {
				t.Errorf("role label = %q, want %q", got, role)
			}
			if role == "" && mc.Labels != nil {
				t.Errorf("labels = %v, want none", mc.Labels)
			}
			if raw := string(mc.Spec.Config.Raw); !strings.Contains(raw, `"sshAuthorizedKeys":["ssh-ed25519 AAAA admin"]`) {
				t.Errorf("spec.config = %s", raw)
			}
			if src, _ := set.MachineConfigSource(mc.Name); !src.FromButane {
				t.Errorf("source not marked FromButane: %+v", src)
			}
		})
	}
}

func TestButaneLocalFilesResolveNextToTheButaneFile(t *testing.T) {
	writeTree(t, map[string]string{
		"cfg/motd.bu":  "variant: fcos\nversion: 1.6.0\nstorage:\n  files:\n    - path: /etc/motd\n      contents:\n        local: motd.txt\n",
		"cfg/motd.txt": "hello\n",
	})
	set, err := Load(Options{}, "cfg")
	if err != nil {
		t.Fatal(err)
	}
	if raw := string(onlyMC(t, set).Spec.Config.Raw); !strings.Contains(raw, "data:,hello%0A") {
		t.Errorf("local file not embedded: %s", raw)
	}
}

func onlyMC(t *testing.T, set *Set) *mcfgv1.MachineConfig {
	t.Helper()
	if len(set.MachineConfigs) != 1 {
		t.Fatalf("got %d MachineConfigs, want 1", len(set.MachineConfigs))
	}
	return set.MachineConfigs[0]
}
