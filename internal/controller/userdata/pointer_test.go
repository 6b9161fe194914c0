package userdata

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/ignition"
)

const testCA = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"

func TestPointerConfig(t *testing.T) {
	for _, v := range []string{"3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0"} {
		t.Run(v, func(t *testing.T) {
			out, err := PointerConfig(Pointer{Pool: "infra", ServerHost: "api-int.example.com", CABundle: []byte(testCA), Token: "s3cret", SpecVersion: ignition.MustVersion(v)})
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := ignition.Parse(out)
			if err != nil {
				t.Fatalf("pointer config does not validate: %v", err)
			}
			var probe struct{ Ignition struct{ Version string } }
			_ = json.Unmarshal(out, &probe)
			if probe.Ignition.Version != v {
				t.Errorf("version %s, want %s", probe.Ignition.Version, v)
			}
			merge := cfg.Ignition.Config.Merge
			if len(merge) != 1 || *merge[0].Source != "https://api-int.example.com:22623/config/infra" {
				t.Fatalf("merge = %+v", merge)
			}
			if len(merge[0].HTTPHeaders) != 1 || merge[0].HTTPHeaders[0].Name != "Authorization" || *merge[0].HTTPHeaders[0].Value != "Bearer s3cret" {
				t.Errorf("headers = %+v", merge[0].HTTPHeaders)
			}
			cas := cfg.Ignition.Security.TLS.CertificateAuthorities
			if len(cas) != 1 || !strings.HasSuffix(*cas[0].Source, base64.StdEncoding.EncodeToString([]byte(testCA))) {
				t.Errorf("CA = %+v", cas)
			}
			if cfg.Ignition.Timeouts.HTTPResponseHeaders == nil || cfg.Ignition.Timeouts.HTTPTotal != nil {
				t.Errorf("timeouts = %+v: want a per-response bound and no total", cfg.Ignition.Timeouts)
			}
		})
	}
}

func TestPointerConfigRefusals(t *testing.T) {
	ok := Pointer{Pool: "worker", ServerHost: "mcs:8443", CABundle: []byte(testCA), SpecVersion: ignition.V3_4}
	if out, err := PointerConfig(ok); err != nil || !strings.Contains(string(out), "https://mcs:8443/config/worker") || strings.Contains(string(out), "httpHeaders") {
		t.Fatalf("explicit port kept, no header without token: %s %v", out, err)
	}
	for name, p := range map[string]Pointer{
		"no host": {Pool: "w", CABundle: []byte(testCA), SpecVersion: ignition.V3_4},
		"no CA":   {Pool: "w", ServerHost: "h", SpecVersion: ignition.V3_4},
		"spec 2":  {Pool: "w", ServerHost: "h", CABundle: []byte(testCA), SpecVersion: ignition.V2_2},
	} {
		if _, err := PointerConfig(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestRotateInstallerCA(t *testing.T) {
	one := `{"ignition":{"version":"2.2.0","config":{"append":[{"source":"https://api-int:22623/config/worker"}]},"security":{"tls":{"certificateAuthorities":[{"source":"data:text/plain;charset=utf-8;base64,b2xk","verification":{}}]}}}}`
	out, changed, err := RotateInstallerCA([]byte(one), []byte(testCA))
	if err != nil || !changed {
		t.Fatalf("changed=%v err=%v", changed, err)
	}
	if !strings.Contains(string(out), base64.StdEncoding.EncodeToString([]byte(testCA))) || !strings.Contains(string(out), `"version":"2.2.0"`) || !strings.Contains(string(out), "config/worker") {
		t.Fatalf("rotation lost something: %s", out)
	}
	if _, again, _ := RotateInstallerCA(out, []byte(testCA)); again {
		t.Fatal("rotating to the same CA is a change")
	}
	two := `{"ignition":{"version":"3.2.0","security":{"tls":{"certificateAuthorities":[{"source":"data:,a"},{"source":"data:,b"}]}}}}`
	if _, _, err := RotateInstallerCA([]byte(two), []byte(testCA)); !errors.Is(err, ErrSeveralCAs) {
		t.Fatalf("two CAs: %v", err)
	}
	if _, _, err := RotateInstallerCA([]byte("#cloud-config\n"), []byte(testCA)); !errors.Is(err, ErrNotPointerConfig) {
		t.Fatalf("cloud-init: %v", err)
	}
	none := `{"ignition":{"version":"3.2.0"}}`
	if _, changed, err := RotateInstallerCA([]byte(none), []byte(testCA)); changed || err != nil {
		t.Fatalf("no pinned CA: changed=%v err=%v", changed, err)
	}
}

func TestParseCASource(t *testing.T) {
	for in, want := range map[string]CASource{
		"configmap:openshift-machine-config-operator/machine-config-server-ca": {"configmap", "openshift-machine-config-operator", "machine-config-server-ca", "ca-bundle.crt"},
		"secret:mco/mcs-tls:tls.crt": {"secret", "mco", "mcs-tls", "tls.crt"},
		"secret:mco/mcs-tls":         {"secret", "mco", "mcs-tls", "ca.crt"},
	} {
		got, err := ParseCASource(in)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "configmap:name", "file:/x", "secret:/name"} {
		if _, err := ParseCASource(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// secretUpToDate decides whether the controller writes; an unchanged Secret must not be written.
func TestSecretUpToDate(t *testing.T) {
	base := func() *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"l": "v"}, OwnerReferences: []metav1.OwnerReference{{Name: "worker", UID: "u"}}},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{"userData": []byte("{}"), "disableTemplating": []byte("true\n")},
		}
	}
	withExtraLabel := base()
	withExtraLabel.Labels["added-by-someone"] = "x"
	if !secretUpToDate(withExtraLabel, base()) {
		t.Error("an extra label someone added is no reason to write")
	}
	for name, mutate := range map[string]func(*corev1.Secret){
		"data":  func(s *corev1.Secret) { s.Data["userData"] = []byte(`{"x":1}`) },
		"label": func(s *corev1.Secret) { s.Labels["l"] = "other" },
		"owner": func(s *corev1.Secret) { s.OwnerReferences = nil },
		"type":  func(s *corev1.Secret) { s.Type = corev1.SecretTypeTLS },
	} {
		existing := base()
		mutate(existing)
		if secretUpToDate(existing, base()) {
			t.Errorf("%s differs but the secret counts as up to date", name)
		}
	}
}
