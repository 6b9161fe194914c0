package bootimage

import (
	"encoding/json"
	"testing"

	"github.com/mco-dev/mco/internal/ignition"
)

func TestUpgradeStub(t *testing.T) {
	const ca = "data:text/plain;charset=utf-8;base64,LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJmYWtlCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"
	v22 := `{"ignition":{"config":{"append":[{"source":"https://api-int.mycluster.example.com:22623/config/worker","verification":{}}]},` +
		`"security":{"tls":{"certificateAuthorities":[{"source":"` + ca + `","verification":{}}]}},"timeouts":{},"version":"2.2.0"},` +
		`"networkd":{},"passwd":{},"storage":{},"systemd":{}}`
	out, from, err := UpgradeStub([]byte(v22), StubSpecVersion)
	if err != nil || from != "2.2.0" || out == nil {
		t.Fatalf("out=%s from=%s err=%v", out, from, err)
	}
	cfg, err := ignition.Parse(out)
	if err != nil {
		t.Fatalf("upgraded stub does not validate: %v", err)
	}
	var probe struct{ Ignition struct{ Version string } }
	_ = json.Unmarshal(out, &probe)
	if probe.Ignition.Version != "3.1.0" {
		t.Errorf("version %s", probe.Ignition.Version)
	}
	merge := cfg.Ignition.Config.Merge
	if len(merge) != 1 || *merge[0].Source != "https://api-int.mycluster.example.com:22623/config/worker" {
		t.Errorf("merge = %+v", merge)
	}
	cas := cfg.Ignition.Security.TLS.CertificateAuthorities
	if len(cas) != 1 || *cas[0].Source != ca {
		t.Errorf("CA = %+v", cas)
	}

	for name, in := range map[string]string{
		"spec 3":     `{"ignition":{"version":"3.1.0"}}`,
		"cloud-init": "#cloud-config\nusers: []\n",
		"other json": `{"userdata":"x"}`,
	} {
		if out, _, err := UpgradeStub([]byte(in), StubSpecVersion); out != nil || err != nil {
			t.Errorf("%s: out=%s err=%v, want left alone", name, out, err)
		}
	}
	if _, _, err := UpgradeStub([]byte(`{"ignition":{"version":"1.0.0"}}`), StubSpecVersion); err == nil {
		t.Error("spec 1 accepted")
	}
}
