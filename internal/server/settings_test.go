package server

import (
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestServerModeFlags(t *testing.T) {
	tests := []struct {
		name    string
		flags   Settings
		wantErr string
	}{
		{"two modes", Settings{BootstrapDir: "a", FromDir: "b"}, "different modes"},
		{"tokens file in cluster mode", Settings{TokensFile: "t", Kubeconfig: "k"}, "--tokens-file"},
		{"pull secret file in cluster mode", Settings{PullSecretFile: "p", Kubeconfig: "k"}, "--pull-secret-file"},
		{"pull secret without namespace", Settings{PullSecret: "pull-secret", Kubeconfig: "k"}, "<namespace>/<name>"},
		{"bootstrap with a pull secret file", Settings{BootstrapDir: "a", PullSecretFile: "p"}, ""},
		{"bootstrap", Settings{BootstrapDir: "a"}, ""},
		{"from-dir", Settings{FromDir: "a"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.flags.source(nil)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// Metrics off loopback need the API server to review tokens: the standalone modes refuse such
// an address, naming the flag; on loopback every mode serves plain HTTP.
func TestMetricsOffLoopbackOnlyInClusterMode(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, s := range []Settings{{BootstrapDir: "a"}, {FromDir: "a"}} {
		s.MetricsAddress = ":22625"
		if _, err := s.metricsGuard(log); err == nil || !strings.Contains(err.Error(), "--metrics-bind-address") {
			t.Errorf("%+v: err %v, want one naming --metrics-bind-address", s, err)
		}
		s.MetricsAddress = "127.0.0.1:22625"
		if g, err := s.metricsGuard(log); g != nil || err != nil {
			t.Errorf("%+v: guard %v, err %v; want plain HTTP", s, g, err)
		}
	}
}
