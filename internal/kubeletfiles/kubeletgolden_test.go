package kubeletfiles

import (
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

// The cases in testdata/kubelet were run through the kubelet's own loading code
// (hack/tools/kubeletgoldens merge: loadConfigFile, mergeKubeletConfigurations,
// kubeletConfigFlagPrecedence and ValidateKubeletConfiguration of k8s.io/kubernetes v1.36.3),
// which wrote each kubelet.json.
// Effective must refuse what the kubelet refuses, agree with it on every field any of the
// case's files sets, and what the agent would call not in effect (Satisfies plus
// FlagsOverriding) must be exactly what the real kubelet does not have.
func TestKubeletGoldens(t *testing.T) {
	const dir = "testdata/kubelet"
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 8 {
		t.Fatalf("only %d cases in %s", len(entries), dir)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			c := loadKubeletCase(t, filepath.Join(dir, e.Name()))
			ours, err := Effective(c.config, c.dropIns)
			if c.want.Error != "" {
				if err == nil {
					t.Fatalf("the kubelet refused it (%s); Effective did not", c.want.Error)
				}
				t.Logf("refused as the kubelet does: ours %q, the kubelet's %q", err, c.want.Error)
				return
			}
			if err != nil {
				t.Fatalf("the kubelet accepted it; Effective: %v", err)
			}
			// Effective does not validate: the kubelet's own validation (which refuses, say,
			// reservedSystemCPUs over a host's systemReservedCgroup) is the kubelet's at start.
			if c.want.Invalid != "" {
				t.Logf("the kubelet would refuse to start: %s", c.want.Invalid)
			}
			if e.Name() == "generated-over-kubeadm" && c.want.Invalid != "" {
				t.Errorf("the kubelet refuses the generator's drop-in over kubeadm's configuration: %s", c.want.Invalid)
			}
			files := map[string][]byte{"--config": c.config}
			for _, n := range DropInOrder(slices.Collect(maps.Keys(c.dropIns))) {
				files[n] = c.dropIns[n]
			}
			for name, data := range files {
				if data == nil {
					continue
				}
				flagged := fieldsOf(FlagsOverriding(append([]string{"kubelet"}, c.args...), data))
				var raw map[string]any
				if err := yaml.Unmarshal(data, &raw); err != nil {
					t.Fatal(err)
				}
				delete(raw, "apiVersion")
				delete(raw, "kind")
				var differ []string
				notInEffect(raw, reflect.ValueOf(ours).Elem(), reflect.ValueOf(c.want.Config).Elem(), "", &differ)
				differ = slices.DeleteFunc(differ, func(p string) bool { return strings.HasSuffix(p, "(not a KubeletConfiguration field)") })
				slices.Sort(differ)
				if !slices.Equal(differ, flagged) {
					t.Errorf("%s: Effective and the kubelet differ on %q; the kubelet's flags set %q", name, differ, flagged)
				}
				if name == "--config" {
					continue
				}
				ourVerdict := slices.Compact(slices.Sorted(slices.Values(append(Satisfies(ours, data), flagged...))))
				if kubelets := Satisfies(c.want.Config, data); !slices.Equal(ourVerdict, kubelets) {
					t.Errorf("%s: not in effect by our reading %q, in the kubelet's %q", name, ourVerdict, kubelets)
				}
			}
		})
	}
}

type kubeletCase struct {
	config  []byte
	dropIns map[string][]byte
	args    []string
	want    struct {
		Config  *kubeletv1beta1.KubeletConfiguration `json:"config"`
		Error   string                               `json:"error"`
		Invalid string                               `json:"invalid"`
	}
}

func loadKubeletCase(t *testing.T, dir string) kubeletCase {
	t.Helper()
	var c kubeletCase
	if data, err := os.ReadFile(filepath.Join(dir, "config")); err == nil {
		c.config = data
	}
	if data, err := os.ReadFile(filepath.Join(dir, "args.json")); err == nil {
		if err := json.Unmarshal(data, &c.args); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "kubelet.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &c.want); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "config-dir")
	if _, err := os.Stat(root); err != nil {
		return c // no --config-dir
	}
	c.dropIns = map[string][]byte{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		c.dropIns[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fieldsOf strips FlagsOverriding's " (--flag)" notes.
func fieldsOf(entries []string) []string {
	var out []string
	for _, e := range entries {
		field, _, _ := strings.Cut(e, " (--")
		out = append(out, field)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
