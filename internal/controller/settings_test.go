package controller

import (
	"strings"
	"testing"
	"time"

	servingcertcontroller "github.com/mco-dev/mco/internal/controller/servingcert"
	"github.com/mco-dev/mco/internal/servingcert"
)

// The serving certificate controller is on exactly when it has names: --server-cert-names, else
// the host of --server-host; a bad name is an error naming the flag it came from.
func TestServingCertOptions(t *testing.T) {
	for _, tc := range []struct {
		list       []string
		serverHost string
		want       string // names; "" = controller off
		err        string
	}{
		{nil, "api-int.example.com:22623", "api-int.example.com", ""},
		{nil, "", "", ""},
		{[]string{"mcs.example.com", "10.0.0.5"}, "api-int.example.com:22623", "mcs.example.com,10.0.0.5", ""},
		{[]string{"mcs.example.com"}, "", "mcs.example.com", ""},
		{nil, "bad_host:22623", "", "--server-host"},
		{[]string{"bad name"}, "api-int.example.com", "", "--server-cert-names"},
	} {
		opts, err := servingCertOptions(tc.list, tc.serverHost, "ns", servingcert.DefaultPolicy())
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q, %q: error %v, want one naming %s", tc.list, tc.serverHost, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q, %q: %v", tc.list, tc.serverHost, err)
		case tc.want == "" && opts != nil:
			t.Errorf("%q, %q: controller on for %s, want off", tc.list, tc.serverHost, opts.Names)
		case tc.want != "" && (opts == nil || opts.Names.String() != tc.want || opts.Namespace != "ns"):
			t.Errorf("%q, %q: options %+v, want names %s", tc.list, tc.serverHost, opts, tc.want)
		}
	}
	bad := servingcert.DefaultPolicy()
	bad.Overlap = 5 * 365 * 24 * time.Hour
	if _, err := servingCertOptions(nil, "api-int.example.com", "ns", bad); err == nil || !strings.Contains(err.Error(), "--server-ca-overlap") {
		t.Errorf("an overlap longer than a CA's remaining life: %v", err)
	}
}

// Resolve turns on what the flags ask for, and each refusal names the flag to fix.
func TestSettingsResolve(t *testing.T) {
	base := func() Settings {
		s := Settings{BootImages: true, ManageServerCert: true, CertPolicy: servingcert.DefaultPolicy(), ServerCA: "configmap:ns/ca", UserDataSpecVersion: "3.4.0"}
		s.TokenPolicy.Lifetime, s.TokenPolicy.Overlap = 30*24*time.Hour, 24*time.Hour
		s.BootImage.DefaultArchitecture = "amd64"
		s.UserData.ServerNamespace, s.UserData.MachineAPINamespace = "mco", "machine-api"
		return s
	}
	opts, err := base().Resolve()
	switch {
	case err != nil:
		t.Fatal(err)
	case opts.UserData != nil || opts.ServingCert != nil:
		t.Errorf("user data %+v, serving cert %+v without --server-host: want both off", opts.UserData, opts.ServingCert)
	case opts.BootImages == nil || opts.BootImages.MachineAPINamespace != "machine-api" || opts.ServerTokens == nil || opts.ServerTokens.Namespace != "mco" || opts.ClusterOperator == nil:
		t.Errorf("boot images %+v, tokens %+v, cluster operator %+v: want all on, in their namespaces", opts.BootImages, opts.ServerTokens, opts.ClusterOperator)
	}
	s := base()
	s.ManageMetricsCert = true
	if opts, err := s.Resolve(); err != nil || opts.MetricsCert == nil || opts.MetricsCert.Objects != servingcertcontroller.MetricsObjects ||
		opts.MetricsCert.Names.String() != "mco-metrics.mco.svc" || opts.MetricsCert.Namespace != "mco" {
		t.Errorf("with --manage-metrics-cert: %+v, %v; want the metrics objects for mco-metrics.mco.svc in mco", opts.MetricsCert, err)
	}
	s = base()
	s.UserData.ServerHost, s.BootImages = "api-int.example.com", false
	if opts, err := s.Resolve(); err != nil || opts.UserData == nil || opts.ServingCert == nil || opts.BootImages != nil {
		t.Errorf("with --server-host and --boot-images=false: %+v, %v", opts, err)
	}
	for flag, edit := range map[string]func(*Settings){
		"--render-settle":          func(s *Settings) { s.Options.Render.Settle.Quiet = -time.Second },
		"--server-token-lifetime":  func(s *Settings) { s.TokenPolicy.Overlap = 2 * s.TokenPolicy.Lifetime },
		"--default-architecture":   func(s *Settings) { s.BootImage.DefaultArchitecture = "mips" },
		"--server-ca":              func(s *Settings) { s.UserData.ServerHost, s.ServerCA = "h", "file:/ca" },
		"--user-data-spec-version": func(s *Settings) { s.UserData.ServerHost, s.UserDataSpecVersion = "h", "x" },
	} {
		s := base()
		edit(&s)
		if _, err := s.Resolve(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s: error %v, want one naming the flag", flag, err)
		}
	}
}
