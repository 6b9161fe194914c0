package plan

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	operatorv1 "github.com/openshift/api/operator/v1"
	"github.com/vincent-petithory/dataurl"
)

// ignWithFiles is an Ignition config writing each path with the given data URL source.
func ignWithFiles(t *testing.T, sources map[string]string, compression string) string {
	t.Helper()
	var files []map[string]any
	for path, src := range sources {
		contents := map[string]any{"source": src}
		if compression != "" {
			contents["compression"] = compression
		}
		files = append(files, map[string]any{"path": path, "contents": contents})
	}
	raw, err := json.Marshal(map[string]any{"ignition": map[string]any{"version": "3.5.0"}, "storage": map[string]any{"files": files}})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func registriesMC(t *testing.T, conf string) string {
	return ignWithFiles(t, map[string]string{RegistriesConfPath: dataurl.EncodeBytes([]byte(conf))}, "")
}

func TestSpecialDecidesTheDrainFromRegistriesConf(t *testing.T) {
	crio := reload("crio.service")
	adminReloadOnly := PoliciesFrom(&operatorv1.NodeDisruptionPolicyConfig{Files: []operatorv1.NodeDisruptionPolicySpecFile{
		{Path: RegistriesConfPath, Actions: []operatorv1.NodeDisruptionPolicySpecAction{{Type: operatorv1.ReloadSpecAction, Reload: &operatorv1.ReloadService{ServiceName: "crio.service"}}}},
	}})
	adminDrain := PoliciesFrom(&operatorv1.NodeDisruptionPolicyConfig{Files: []operatorv1.NodeDisruptionPolicySpecFile{
		{Path: RegistriesConfPath, Actions: []operatorv1.NodeDisruptionPolicySpecAction{{Type: operatorv1.DrainSpecAction}}},
	}})
	adminOther := PoliciesFrom(&operatorv1.NodeDisruptionPolicyConfig{Files: []operatorv1.NodeDisruptionPolicySpecFile{
		{Path: "/etc/app.conf", Actions: []operatorv1.NodeDisruptionPolicySpecAction{{Type: operatorv1.DrainSpecAction}}},
	}})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write([]byte(appPlainDBTwoDigest)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		old, new string
		policies Policies
		want     []Action
		rule     string
	}{
		{"safe: no drain, crio reloaded", registriesMC(t, appPlainDBDigest), registriesMC(t, appPlainDBTwoDigest), DefaultPolicies(), acts(crio),
			"file policy /etc/containers/registries.conf (Special: no drain, only safe changes: added digest-only mirror backup.example.net/team/db to apps.example.org/team/db)"},
		{"unsafe: drain and reload", registriesMC(t, appPlainDBTwoDigest), registriesMC(t, appPlainDBDigest), DefaultPolicies(), acts(Action{Type: Drain}, crio),
			"file policy /etc/containers/registries.conf (Special: drain, mirror backup.example.net/team/db of registry apps.example.org/team/db removed)"},
		{"file added with safe content", `{"ignition":{"version":"3.5.0"}}`, registriesMC(t, appDigest), DefaultPolicies(), acts(crio), "(Special: no drain, only safe changes: "},
		{"compressed contents are decoded", registriesMC(t, appPlainDBDigest),
			ignWithFiles(t, map[string]string{RegistriesConfPath: dataurl.EncodeBytes(gz.Bytes())}, "gzip"), DefaultPolicies(), acts(crio), "(Special: no drain, "},
		{"a current file that cannot be decoded drains", ignWithFiles(t, map[string]string{RegistriesConfPath: "https://example.org/registries.conf"}, ""),
			registriesMC(t, appPlainDBDigest), DefaultPolicies(), acts(Action{Type: Drain}, crio),
			"(Special: drain, the current config's file /etc/containers/registries.conf: only inline data: sources can be applied on a node, not https:)"},
		{"a current file containers/image cannot read drains", registriesMC(t, "[[registry]\n"), registriesMC(t, appPlainDBDigest), DefaultPolicies(),
			acts(Action{Type: Drain}, crio), "(Special: drain, the current registries.conf cannot be read: toml: "},
		{"admin policy wins over an unsafe change", registriesMC(t, appPlainDBTwoDigest), registriesMC(t, appPlainDBDigest), adminReloadOnly, acts(crio),
			"file policy /etc/containers/registries.conf"},
		{"admin policy wins over a safe change", registriesMC(t, appPlainDBDigest), registriesMC(t, appPlainDBTwoDigest), adminDrain, acts(Action{Type: Drain}),
			"file policy /etc/containers/registries.conf"},
		{"another change still drains", registriesMC(t, appPlainDBDigest), ignWithFiles(t, map[string]string{
			RegistriesConfPath: dataurl.EncodeBytes([]byte(appPlainDBTwoDigest)), "/etc/app.conf": "data:,x"}, ""), adminOther, acts(Action{Type: Drain}, crio),
			"(Special: no drain, "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := DiffConfigs(mc(tc.old, nil), mc(tc.new, nil))
			if err != nil {
				t.Fatal(err)
			}
			p := Compute(d, tc.policies)
			if len(p.Refused) > 0 {
				t.Fatalf("refused: %q", p.Refused)
			}
			if !reflect.DeepEqual(p.Actions, tc.want) {
				t.Fatalf("actions = %v, want %v", p.Actions, tc.want)
			}
			var rule string
			for _, c := range p.Causes {
				if c.Change == "file "+RegistriesConfPath {
					rule = c.Rule
				}
			}
			if !strings.Contains(rule, tc.rule) {
				t.Fatalf("rule = %q, want it to contain %q", rule, tc.rule)
			}
			if strings.Contains(tc.rule, "(Special") != strings.Contains(rule, "(Special") {
				t.Fatalf("rule = %q: Special applied where it should not be, or the reverse", rule)
			}
		})
	}
}

func TestDiffCarriesRegistriesConfOnlyWhenItChanged(t *testing.T) {
	old := ignWithFiles(t, map[string]string{RegistriesConfPath: dataurl.EncodeBytes([]byte(appPlain)), "/etc/a": "data:,a"}, "")
	d, err := DiffConfigs(mc(old, nil), mc(ignWithFiles(t, map[string]string{RegistriesConfPath: dataurl.EncodeBytes([]byte(appPlain)), "/etc/a": "data:,b"}, ""), nil))
	if err != nil {
		t.Fatal(err)
	}
	if d.RegistriesConf != nil {
		t.Fatalf("RegistriesConf = %+v for an unchanged registries.conf", d.RegistriesConf)
	}
	d, err = DiffConfigs(mc(old, nil), mc(`{"ignition":{"version":"3.5.0"}}`, nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := (&Contents{Old: []byte(appPlain)}); !reflect.DeepEqual(d.RegistriesConf, want) {
		t.Fatalf("RegistriesConf = %+v, want %+v", d.RegistriesConf, want)
	}
}

// The default registries.conf policy is OpenShift's status-only Special action, the value a
// MachineConfiguration status's clusterPolicies reports for that path.
func TestDefaultRegistriesConfPolicyIsSpecial(t *testing.T) {
	fp, ok := DefaultPolicies().filePolicy(RegistriesConfPath)
	if !ok || !reflect.DeepEqual(fp.Actions, []Action{{Type: Special}}) || string(Special) != string(operatorv1.SpecialStatusAction) {
		t.Fatalf("default registries.conf policy = %+v", fp)
	}
}

func TestSpecialOutsideRegistriesConfDrains(t *testing.T) {
	p := Policies{Files: []FilePolicy{{Path: "/etc/other.conf", Actions: []Action{{Type: Special}}}}}
	got := Compute(Diff{Files: []string{"/etc/other.conf"}}, p)
	if !reflect.DeepEqual(got.Actions, acts(Action{Type: Drain}, reload("crio.service"))) ||
		!strings.Contains(got.Causes[0].Rule, "Special is meant for /etc/containers/registries.conf only") {
		t.Fatalf("plan = %+v", got)
	}
}

func TestDrainReason(t *testing.T) {
	safe := &Contents{Old: []byte(appPlainDBDigest), New: []byte(appPlainDBTwoDigest)}
	unsafe := &Contents{Old: []byte(appPlainDBTwoDigest), New: []byte(appPlainDBDigest)}
	files := []string{"/etc/containers/policy.json", RegistriesConfPath}
	admin := PoliciesFrom(&operatorv1.NodeDisruptionPolicyConfig{Files: []operatorv1.NodeDisruptionPolicySpecFile{
		{Path: "/etc/app.conf", Actions: []operatorv1.NodeDisruptionPolicySpecAction{{Type: operatorv1.DrainSpecAction}}},
	}})
	for _, tc := range []struct {
		name     string
		diff     Diff
		policies Policies
		want     string
	}{
		{"drain skipped", Diff{Files: files, RegistriesConf: safe}, DefaultPolicies(),
			"file /etc/containers/registries.conf: file policy /etc/containers/registries.conf (Special: no drain, only safe changes: added digest-only mirror backup.example.net/team/db to apps.example.org/team/db)"},
		{"drain", Diff{Files: files, RegistriesConf: unsafe}, DefaultPolicies(),
			"file /etc/containers/registries.conf: file policy /etc/containers/registries.conf (Special: drain, mirror backup.example.net/team/db of registry apps.example.org/team/db removed)"},
		{"another change drains", Diff{Files: append([]string{"/etc/app.conf"}, files...), RegistriesConf: safe}, admin,
			"file /etc/app.conf: file policy /etc/app.conf"},
		{"reboot", Diff{Files: files, RegistriesConf: safe, KernelArguments: true}, DefaultPolicies(), "kernelArguments: always needs a reboot"},
		{"nothing to explain", Diff{Files: files[:1]}, DefaultPolicies(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Compute(tc.diff, tc.policies).DrainReason(); got != tc.want {
				t.Fatalf("DrainReason = %q, want %q", got, tc.want)
			}
		})
	}
}
