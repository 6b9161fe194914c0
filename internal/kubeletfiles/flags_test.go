package kubeletfiles

import (
	"slices"
	"testing"
)

func TestFlagsOverriding(t *testing.T) {
	dropIn := []byte(kcHead + "maxPods: 100\nlogging: {verbosity: 4, format: json}\nsystemReserved: {memory: 1Gi}\nauthentication: {webhook: {enabled: true}}\nevictionHard: {memory.available: 1Gi}\n")
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"no flags", []string{"/usr/bin/kubelet", "--config=/var/lib/kubelet/config.yaml", "--config-dir=/etc/kubernetes/kubelet.conf.d", "--kubeconfig", "/etc/kubernetes/kubelet.conf"}, nil},
		{"--name=value and --name value", []string{"kubelet", "--max-pods=30", "--system-reserved", "cpu=1"}, []string{"maxPods (--max-pods)", "systemReserved.memory (--system-reserved)"}},
		{"-v in every form", []string{"kubelet", "-v4"}, []string{"logging.verbosity (--v)"}},
		{"-v=", []string{"kubelet", "-v=2"}, []string{"logging.verbosity (--v)"}},
		{"--v", []string{"kubelet", "--v", "2", "--logging-format=text"}, []string{"logging.format (--logging-format)", "logging.verbosity (--v)"}},
		{"underscores are dashes", []string{"kubelet", "--authentication_token_webhook"}, []string{"authentication.webhook.enabled (--authentication-token-webhook)"}},
		{"a flag setting a field the drop-in does not", []string{"kubelet", "--fail-swap-on=false", "--node-ip=10.0.0.1"}, nil},
		{"the program's name and what follows -- are not flags", []string{"--max-pods", "--", "--v=3"}, nil},
		{"a map flag replaces the drop-in's keys", []string{"kubelet", "--eviction-hard=nodefs.available<5%"}, []string{"evictionHard.memory.available (--eviction-hard)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := FlagsOverriding(tc.args, dropIn); !slices.Equal(got, tc.want) {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}

// Every flag the table names sets at least one field, and the flags that matter most are there.
func TestKubeletFlagTable(t *testing.T) {
	if len(kubeletFlagFields) < 100 {
		t.Fatalf("only %d flags", len(kubeletFlagFields))
	}
	for flag, fields := range kubeletFlagFields {
		if len(fields) == 0 {
			t.Errorf("--%s sets nothing", flag)
		}
	}
	for flag, field := range map[string]string{"v": "logging.verbosity", "max-pods": "maxPods", "pod-manifest-path": "staticPodPath", "client-ca-file": "authentication.x509.clientCAFile"} {
		if !slices.Equal(kubeletFlagFields[flag], []string{field}) {
			t.Errorf("--%s sets %q, want %s", flag, kubeletFlagFields[flag], field)
		}
	}
}
