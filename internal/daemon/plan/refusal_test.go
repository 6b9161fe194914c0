package plan

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	operatorv1 "github.com/openshift/api/operator/v1"
	"github.com/vincent-petithory/dataurl"
)

// TestUnreadableRegistriesConfIsRefused: a changed registries.conf that containers/image cannot
// decode (OpenShift decodes it into sysregistriesv2.V2RegistriesConf before writing and fails
// the update when it cannot) refuses the plan, whatever the policy or the rest of the plan:
// crio reads the file on every pull. A current file that cannot be read is not refused: the
// new one replaces it (Special drains first, see TestSpecialDecidesTheDrainFromRegistriesConf).
func TestUnreadableRegistriesConfIsRefused(t *testing.T) {
	adminReload := PoliciesFrom(&operatorv1.NodeDisruptionPolicyConfig{Files: []operatorv1.NodeDisruptionPolicySpecFile{
		{Path: RegistriesConfPath, Actions: []operatorv1.NodeDisruptionPolicySpecAction{{Type: operatorv1.ReloadSpecAction, Reload: &operatorv1.ReloadService{ServiceName: "crio.service"}}}},
	}})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write([]byte(appDigest)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		old, new   string
		policies   Policies
		kernelArgs bool
		refused    string // substring of the refusal; "" = not refused
	}{
		{name: "not TOML", old: registriesMC(t, appDigest), new: registriesMC(t, appDigest+"location = \n"), policies: DefaultPolicies(),
			refused: "the new config's /etc/containers/registries.conf cannot be read by containers/image, so crio could pull no image: toml: "},
		{name: "a value of the wrong type", old: registriesMC(t, appDigest), new: registriesMC(t, "[[registry]]\nlocation = \"a.example.org\"\ninsecure = \"yes\"\n"),
			policies: DefaultPolicies(), refused: "insecure"},
		{name: "a top-level setting of the wrong type", old: registriesMC(t, appDigest), new: registriesMC(t, "short-name-mode = 1\n"+appDigest),
			policies: DefaultPolicies(), refused: "short-name-mode"},
		{name: "refused under an admin policy too", old: registriesMC(t, appDigest), new: registriesMC(t, "[[registry]\n"), policies: adminReload,
			refused: "cannot be read by containers/image"},
		{name: "refused when the node reboots anyway", old: registriesMC(t, appDigest), new: registriesMC(t, "[[registry]\n"), policies: DefaultPolicies(),
			kernelArgs: true, refused: "cannot be read by containers/image"},
		{name: "contents the agent cannot decode", old: registriesMC(t, appDigest),
			new:      ignWithFiles(t, map[string]string{RegistriesConfPath: "https://example.org/registries.conf"}, ""),
			policies: DefaultPolicies(), refused: "the new config's file /etc/containers/registries.conf: only inline data: sources"},
		{name: "a current file that cannot be read is replaced", old: registriesMC(t, "[[registry]\n"), new: registriesMC(t, appDigest), policies: DefaultPolicies()},
		{name: "keys containers/image ignores are no refusal", old: registriesMC(t, appDigest), new: registriesMC(t, appDigest+"[registries.search]\nregistries = [\"a.example.org\"]\n"),
			policies: DefaultPolicies()},
		// OpenShift decodes the file without decompressing it (GetIgnitionFileDataByPath), so it
		// fails the update on a gzip-compressed registries.conf; containers/image reads what is
		// written, the decompressed file.
		{name: "compressed contents are read decompressed", old: registriesMC(t, appPlain),
			new: ignWithFiles(t, map[string]string{RegistriesConfPath: dataurl.EncodeBytes(gz.Bytes())}, "gzip"), policies: DefaultPolicies()},
		{name: "the file removed", old: registriesMC(t, appDigest), new: `{"ignition":{"version":"3.5.0"}}`, policies: DefaultPolicies()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := DiffConfigs(mc(tc.old, nil), mc(tc.new, nil))
			if err != nil {
				t.Fatal(err)
			}
			d.KernelArguments = tc.kernelArgs
			p := Compute(d, tc.policies)
			got := strings.Join(p.Refused, "; ")
			switch {
			case tc.refused == "" && got != "":
				t.Fatalf("refused: %s", got)
			case tc.refused != "" && !strings.Contains(got, tc.refused):
				t.Fatalf("refusal %q, want it to contain %q (plan %v)", got, tc.refused, p)
			}
		})
	}
}
