package diagnose

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mco-dev/mco/internal/ignition"
)

func machineConfig(name, config string) *mcfgv1.MachineConfig {
	return &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
			lastAppliedAnnotation: `{"spec":{"config":` + config + `}}`,
		}},
		Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(config)}},
	}
}

func gzipped(t *testing.T, s string) string {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(s))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return "data:;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
}

func TestRedactMachineConfig(t *testing.T) {
	const secret = "hunter2-token-value"
	tests := []struct {
		name   string
		config string
		// hidden are the redactions wanted, by What; kept are strings that must survive.
		hidden []string
		kept   []string
	}{
		{name: "a file at a secret path, Ignition 3",
			config: `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/pki/tls/private/server.key","contents":{"source":"data:,` + secret + `"}},{"path":"/etc/chrony.conf","contents":{"source":"data:,pool%20ntp"}}]}}`,
			hidden: []string{"file /etc/pki/tls/private/server.key"}, kept: []string{"pool%20ntp", "/etc/chrony.conf"}},
		{name: "gzipped contents are hashed decompressed, compression dropped",
			config: `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/var/lib/kubelet/config.json","contents":{"compression":"gzip","source":"` + gzipped(t, secret) + `"}}]}}`,
			hidden: []string{"file /var/lib/kubelet/config.json"}},
		{name: "appended fragments",
			config: `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/app/credentials","append":[{"source":"data:,` + secret + `"}]}]}}`,
			hidden: []string{"file /etc/app/credentials (append 0)"}},
		{name: "Ignition 2",
			config: `{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/etc/secrets/db","contents":{"source":"data:,` + secret + `"}}]}}`,
			hidden: []string{"file /etc/secrets/db"}},
		{name: "a remote source is hashed as the URL, which may carry a token",
			config: `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/token","contents":{"source":"https://example.com/x?sig=` + secret + `"}}]}}`,
			hidden: []string{"file /etc/token"}},
		{name: "a password hash",
			config: `{"ignition":{"version":"3.4.0"},"passwd":{"users":[{"name":"core","passwordHash":"$6$` + secret + `","sshAuthorizedKeys":["ssh-ed25519 AAAA admin"]}]}}`,
			hidden: []string{"passwordHash of user core"}, kept: []string{"ssh-ed25519 AAAA admin"}},
		{name: "nothing secret",
			config: `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,` + "hello" + `"}}]}}`,
			kept:   []string{"data:,hello"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := machineConfig("50-x", tt.config)
			got, done, err := RedactMachineConfig(mc)
			if err != nil {
				t.Fatal(err)
			}
			out := string(got.Spec.Config.Raw)
			if strings.Contains(out, secret) || strings.Contains(out, base64.StdEncoding.EncodeToString([]byte(secret))) {
				t.Errorf("redacted config still holds the secret: %s", out)
			}
			if _, ok := got.Annotations[lastAppliedAnnotation]; ok {
				t.Errorf("the last-applied annotation, a copy of the unredacted spec, was kept")
			}
			var whats []string
			for _, r := range done {
				whats = append(whats, r.What)
				if r.SHA256 != sha(secret) && !strings.HasPrefix(r.What, "passwordHash") && !strings.Contains(tt.config, "https://") {
					t.Errorf("%s: sha256 %s, want the secret's %s", r.What, r.SHA256, sha(secret))
				}
				if !strings.Contains(out, r.SHA256) {
					t.Errorf("%s: the placeholder does not name sha256 %s: %s", r.What, r.SHA256, out)
				}
			}
			if strings.Join(whats, ",") != strings.Join(tt.hidden, ",") {
				t.Errorf("redacted %q, want %q", whats, tt.hidden)
			}
			for _, k := range tt.kept {
				if !strings.Contains(out, k) {
					t.Errorf("lost %q: %s", k, out)
				}
			}
			// Still valid Ignition; the placeholder decodes.
			cfg, err := ignition.Parse(got.Spec.Config.Raw)
			if err != nil {
				t.Fatalf("redacted config is not valid Ignition: %v\n%s", err, out)
			}
			_ = cfg
			if len(done) == 0 && out != tt.config {
				t.Errorf("nothing to redact, yet the config changed:\n%s\nwant\n%s", out, tt.config)
			}
			if string(mc.Spec.Config.Raw) != tt.config {
				t.Errorf("the input MachineConfig was changed")
			}
		})
	}
}

func TestRedactPlaceholderDecodes(t *testing.T) {
	mc := machineConfig("50-x", `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/my.key","contents":{"compression":"gzip","source":"`+gzipped(t, "k")+`"}}]}}`)
	got, _, err := RedactMachineConfig(mc)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Storage struct {
			Files []struct {
				Contents struct {
					Source      string  `json:"source"`
					Compression *string `json:"compression"`
				} `json:"contents"`
			} `json:"files"`
		} `json:"storage"`
	}
	if err := json.Unmarshal(got.Spec.Config.Raw, &cfg); err != nil {
		t.Fatal(err)
	}
	c := cfg.Storage.Files[0].Contents
	in, err := ignition.DecodeInline(c.Source, c.Compression, 1<<20)
	if err != nil {
		t.Fatalf("placeholder %q: %v", c.Source, err)
	}
	if want := "redacted by mco diagnose: sha256 " + sha("k") + "\n"; string(in.Data) != want {
		t.Errorf("placeholder decodes to %q, want %q", in.Data, want)
	}
}

func TestRedactRefusesWhatItCannotRead(t *testing.T) {
	got, _, err := RedactMachineConfig(machineConfig("50-yaml", `storage: {files: [{path: /etc/x.key}]}`))
	if err == nil || !strings.Contains(err.Error(), "50-yaml") {
		t.Fatalf("error %v, want one naming the MachineConfig", err)
	}
	if len(got.Spec.Config.Raw) != 0 {
		t.Errorf("an unreadable config must be left out whole, got %s", got.Spec.Config.Raw)
	}
}
