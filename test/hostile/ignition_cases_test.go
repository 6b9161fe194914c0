package hostile

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/render"
)

// ign is a config of spec version with body (a JSON fragment starting with ",") after the
// ignition section.
func ign(version, body string) string {
	return `{"ignition":{"version":"` + version + `"}` + body + `}`
}

// ignitionCase is a raw config that ignition.Parse must refuse, naming field (the path inside
// the config, "" for the document) and reason.
type ignitionCase struct {
	name, raw, field, reason string
}

// ignitionCases give each config to ignition.Parse, which must return nothing but the error,
// and then, as the spec.config of a MachineConfig, to render.ValidateMachineConfig, whose
// error must name the MachineConfig and the field under spec.config.
func ignitionCases() []hostileCase {
	rows := []ignitionCase{
		{"spec 2.2 relative path", ign("2.2.0", `,"storage":{"files":[{"filesystem":"root","path":"etc/x","contents":{"source":"data:,x"}}]}`),
			"storage.files.0.path", "path not absolute"},
		{"spec 2.2 wrong type", ign("2.2.0", `,"storage":{"files":[{"filesystem":"root","path":"/etc/x","mode":"rw"}]}`),
			"storage.files.0.mode", "got a string, want an integer"},
		{"spec 3.0 wrong type", ign("3.0.0", `,"storage":{"files":[{"path":"/etc/x","mode":"0644"}]}`),
			"storage.files.0.mode", "got a string, want an integer"},
		{"spec 3.1 list given as a string", ign("3.1.0", `,"storage":{"files":"/etc/x"}`),
			"storage.files", "got a string, want a list"},
		{"spec 3.2 unit name a number", ign("3.2.0", `,"systemd":{"units":[{"name":5,"contents":"[Unit]"}]}`),
			"systemd.units.0.name", "got a number, want a string"},
		{"spec 3.3 unit without a type", ign("3.3.0", `,"systemd":{"units":[{"name":"chronyd","contents":"[Unit]"}]}`),
			"systemd.units.0.name", "invalid systemd unit extension"},
		{"spec 3.5 data after the config", ign("3.5.0", "") + " garbage", "", "after top-level value"},
		{"spec 3.5 a second config after the first", ign("3.5.0", "") + ign("3.5.0", `,"storage":{}`), "", "after top-level value"},
		{"spec 3.5 key given twice", ign("3.5.0", `,"storage":{"files":[{"path":"/etc/x","path":"/etc/shadow"}]}`),
			"storage.files.0.path", "more than once"},
		{"spec 3.5 key given twice, once in another case", ign("3.5.0", `,"storage":{"files":[{"path":"/etc/x","Path":"/etc/shadow"}]}`),
			"storage.files.0.Path", `keys "Path", "path" all set path`},
		{"spec 3.2 ignored key beside a wrong type", ign("3.2.0", `,"networkd":{},"storage":{"files":[{"path":"/etc/x","mode":"0644"}]}`),
			"storage.files.0.mode", "got a string, want an integer"},
		{"spec 3.5 truncated", `{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"/etc/x"`, "", "unexpected end of JSON input"},
		{"deep nesting", ign("3.5.0", `,"x":`+strings.Repeat("[", 100_000)+strings.Repeat("]", 100_000)), "x.0.0.0", "exceeded max depth"},
		{"deep nesting in YAML", "ignition:\n  version: 3.5.0\nx: " + strings.Repeat("[", 100_000), "", "exceeded max depth"},
		{"over the size limit", ign("3.5.0", `,"storage":{"files":[{"path":"/etc/big","contents":{"source":"data:,`+strings.Repeat("a", ignition.MaxConfigSize)+`"}}]}`),
			"", fmt.Sprintf("over the %d byte limit", ignition.MaxConfigSize)},
		{"missing version", `{"storage":{"files":[{"path":"/etc/x"}]}}`, "ignition.version", "missing"},
		{"version a number", `{"ignition":{"version":3.5}}`, "ignition.version", "got a number, want a string"},
		{"unsupported spec", ign("4.0.0", ""), "ignition.version", "unsupported Ignition spec version 4.0.0"},
		{"spec 2.1 converted is still checked", ign("2.1.0", `,"storage":{"files":[{"filesystem":"root","path":"etc/x"}]}`),
			"storage.files.0.path", "path not absolute"},
		// The 2.x library located each problem by scanning the config from its start: this
		// took longer than a test binary may run.
		{"spec 2.2 with thousands of mistakes", ign("2.2.0", `,"storage":{"files":[`+manyFiles(20_000, `{"filesystem":"root","path":"etc/x%d"}`)+`]}`),
			"storage.files.0.path", "more problems"},
		{"second YAML document", "ignition: {version: 3.5.0}\n---\nstorage: {files: [{path: /etc/shadow}]}\n", "", "more than one YAML document"},
	}
	var cases []hostileCase
	for _, r := range rows {
		mcName := "99-hostile-" + slug(r.name)
		field := "spec.config"
		if r.field != "" {
			field += "." + r.field
		}
		cases = append(cases, hostileCase{
			entry: "ignition.Parse", name: r.name,
			want: []string{`MachineConfig "` + mcName + `"`, field, r.reason},
			run: func(t *testing.T) error {
				cfg, err := ignition.Parse([]byte(r.raw))
				if err == nil {
					return nil
				}
				if !reflect.DeepEqual(cfg, ignition.Config{}) {
					t.Errorf("a refused config still produced output: %+v", cfg)
				}
				for _, w := range []string{r.field, r.reason} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("ignition.Parse error lacks %q: %v", w, err)
					}
				}
				_, err = render.ValidateMachineConfig(machineConfig(mcName, "worker", r.raw))
				return err
			},
		})
	}
	return cases
}

// ignitionWarningCases are configs Ignition accepts with a warning (and OpenShift renders):
// ignition.Parse and render must accept them too, leaving the key out (or reading it as the
// field it spells in another case), and say so, naming the MachineConfig, field, line and key.
var ignitionWarningCases = []struct {
	name, raw, path, key, reason string
}{
	{"spec 2.2 unknown key", ign("2.2.0", `,"storage":{"files":[{"filesystem":"root","path":"/etc/x","contentz":{"source":"data:,x"}}]}`),
		"storage.files.0.contentz", "contentz", `unknown key "contentz" in spec 2.x: ignored`},
	{"spec 3.4 unknown key", ign("3.4.0", `,"storage":{"filez":[{"path":"/etc/x"}]}`),
		"storage.filez", "filez", `unknown key "filez" in spec 3.4.0: ignored`},
	{"spec 3.2 networkd section of spec 2", ign("3.2.0", `,"networkd":{"units":[{"name":"10-eth0.network","contents":"[Match]"}]}`),
		"networkd", "networkd", `unknown key "networkd" in spec 3.2.0: ignored`},
	{"spec 3.2 file with filesystem root", ign("3.2.0", `,"storage":{"files":[{"filesystem":"root","path":"/etc/x","contents":{"source":"data:,x"}}]}`),
		"storage.files.0.filesystem", "filesystem", `unknown key "filesystem" in spec 3.2.0: ignored`},
	{"spec 3.5 unknown key differing only in case", ign("3.5.0", `,"Storage":{"files":[{"path":"/etc/x"}]}`),
		"Storage", "Storage", `key "Storage" is read as "storage"`},
}

func TestIgnitionOnlyWarns(t *testing.T) {
	for _, c := range ignitionWarningCases {
		t.Run(c.name, func(t *testing.T) {
			_, warnings, err := ignition.ParseWithWarnings([]byte(c.raw))
			if err != nil {
				t.Fatalf("refused what Ignition only warns about: %v", err)
			}
			if len(warnings) != 1 || warnings[0].Path != c.path || warnings[0].Key != c.key || warnings[0].Line == 0 || !strings.Contains(warnings[0].Reason, c.reason) {
				t.Fatalf("warnings %+v, want %s at %s with its position and %q", warnings, c.key, c.path, c.reason)
			}
			mcName := "99-warned-" + slug(c.name)
			_, ws, err := render.ValidateMachineConfigWithWarnings(machineConfig(mcName, "worker", c.raw))
			if err != nil {
				t.Fatalf("render refused it: %v", err)
			}
			if len(ws) != 1 || ws[0].MachineConfig != mcName || ws[0].Field != "spec.config."+c.path || ws[0].Key != c.key || ws[0].Line == 0 {
				t.Errorf("render warnings %+v, want %s of %s at spec.config.%s", ws, c.key, mcName, c.path)
			}
		})
	}
}

// manyFiles joins n file entries made from format (which takes the index).
func manyFiles(n int, format string) string {
	entries := make([]string, n)
	for i := range entries {
		entries[i] = fmt.Sprintf(format, i)
	}
	return strings.Join(entries, ",")
}

// machineConfig is a MachineConfig of role carrying raw as its Ignition config.
func machineConfig(name, role, raw string) *mcfgv1.MachineConfig {
	return &mcfgv1.MachineConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: mcfgv1.GroupVersion.String(), Kind: "MachineConfig"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"machineconfiguration.openshift.io/role": role}},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(raw)}},
	}
}

// slug makes a case name usable in object names.
func slug(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
