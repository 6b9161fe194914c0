package server

import (
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
