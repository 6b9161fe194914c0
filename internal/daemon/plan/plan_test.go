package plan

import (
	"reflect"
	"testing"

	operatorv1 "github.com/openshift/api/operator/v1"
)

func acts(a ...Action) []Action { return a }

var reboot = Action{Type: Reboot}

func TestCompute(t *testing.T) {
	defaults := DefaultPolicies()
	admin := PoliciesFrom(&operatorv1.NodeDisruptionPolicyConfig{
		Files: []operatorv1.NodeDisruptionPolicySpecFile{
			{Path: "/etc/chrony.conf", Actions: []operatorv1.NodeDisruptionPolicySpecAction{{Type: operatorv1.RestartSpecAction, Restart: &operatorv1.RestartService{ServiceName: "chronyd.service"}}}},
			{Path: "/etc/app", Actions: []operatorv1.NodeDisruptionPolicySpecAction{{Type: operatorv1.NoneSpecAction}}},
			{Path: "/etc/app/special", Actions: []operatorv1.NodeDisruptionPolicySpecAction{{Type: operatorv1.DrainSpecAction}}},
			// replaces the default (Reload crio.service) for the same path
			{Path: "/etc/containers/policy.json", Actions: []operatorv1.NodeDisruptionPolicySpecAction{{Type: operatorv1.NoneSpecAction}}},
		},
		Units: []operatorv1.NodeDisruptionPolicySpecUnit{
			{Name: "app.service", Actions: []operatorv1.NodeDisruptionPolicySpecAction{{Type: operatorv1.DaemonReloadSpecAction}, {Type: operatorv1.RestartSpecAction, Restart: &operatorv1.RestartService{ServiceName: "app.service"}}}},
		},
		SSHKey: operatorv1.NodeDisruptionPolicySpecSSHKey{Actions: []operatorv1.NodeDisruptionPolicySpecAction{{Type: operatorv1.ReloadSpecAction, Reload: &operatorv1.ReloadService{ServiceName: "sshd.service"}}}},
	})
	cases := []struct {
		name     string
		diff     Diff
		policies Policies
		want     []Action
	}{
		{"nothing changed", Diff{}, defaults, acts(Action{Type: None})},
		{"unmatched file reboots", Diff{Files: []string{"/etc/foo"}}, defaults, acts(reboot)},
		{"exact file policy None", Diff{Files: []string{"/var/lib/kubelet/config.json"}}, defaults, acts(Action{Type: None})},
		{"exact file policy reload", Diff{Files: []string{"/etc/containers/policy.json"}}, defaults, acts(reload("crio.service"))},
		{"directory prefix", Diff{Files: []string{"/etc/containers/registries.d/x.yaml"}}, defaults, acts(reload("crio.service"))},
		{"a kubelet drop-in restarts the kubelet", Diff{Files: []string{"/etc/kubernetes/kubelet.conf.d/50-machineconfiguration.conf"}}, defaults, acts(restart("kubelet.service"))},
		{"and so does one in a subdirectory, which the kubelet reads too", Diff{Files: []string{"/etc/kubernetes/kubelet.conf.d/site/10.conf"}}, defaults, acts(restart("kubelet.service"))},
		{"OpenShift's kubelet.conf still reboots", Diff{Files: []string{"/etc/kubernetes/kubelet.conf"}}, defaults, acts(reboot)},
		{"prefix must end at a path boundary", Diff{Files: []string{"/etc/containers/registries.dx"}}, defaults, acts(reboot)},
		{"registries.conf of unknown contents drains and reloads", Diff{Files: []string{"/etc/containers/registries.conf"}}, defaults, acts(Action{Type: Drain}, reload("crio.service"))},
		{"longest prefix wins", Diff{Files: []string{"/etc/app/special/x"}}, admin, acts(Action{Type: Drain})},
		{"shorter prefix", Diff{Files: []string{"/etc/app/other"}}, admin, acts(Action{Type: None})},
		{"admin replaces default", Diff{Files: []string{"/etc/containers/policy.json"}}, admin, acts(Action{Type: None})},
		{"admin file restart", Diff{Files: []string{"/etc/chrony.conf"}}, admin, acts(restart("chronyd.service"))},
		{"None dropped when mixed", Diff{Files: []string{"/etc/chrony.conf", "/etc/app/x"}}, admin, acts(restart("chronyd.service"))},
		{"unit exact match, daemon-reload first", Diff{Files: []string{"/etc/chrony.conf"}, Units: []string{"app.service"}}, admin,
			acts(Action{Type: DaemonReload}, restart("chronyd.service"), restart("app.service"))},
		{"unit without policy reboots", Diff{Units: []string{"other.service"}}, admin, acts(reboot)},
		{"default unit policy", Diff{Units: []string{"iri-registry.service"}}, defaults, acts(Action{Type: DaemonReload}, restart("iri-registry.service"))},
		{"ssh keys default None", Diff{SSHKeys: true}, defaults, acts(Action{Type: None})},
		{"password uses sshkey policy", Diff{Password: true}, admin, acts(reload("sshd.service"))},
		{"any other passwd change uses the sshkey policy", Diff{Passwd: true}, admin, acts(reload("sshd.service"))},
		{"repeated actions once", Diff{Files: []string{"/etc/containers/policy.json", "/etc/crio/policies/a"}}, defaults, acts(reload("crio.service"))},
		{"kernel arguments reboot", Diff{KernelArguments: true, SSHKeys: true}, defaults, acts(reboot)},
		{"os image reboots", Diff{OSImageURL: true}, defaults, acts(reboot)},
		{"extensions reboot", Diff{Extensions: true}, defaults, acts(reboot)},
		{"kernel type reboots", Diff{KernelType: true}, defaults, acts(reboot)},
		{"fips reboots", Diff{FIPS: true}, defaults, acts(reboot)},
		{"force reboots", Diff{Force: true}, defaults, acts(reboot)},
		{"a pending reboot is still owed", Diff{RebootPending: true, Files: []string{"/etc/containers/policy.json"}}, defaults, acts(reboot)},
		{"any reboot wins", Diff{Files: []string{"/etc/containers/policy.json", "/etc/unknown"}}, defaults, acts(reboot)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Compute(tc.diff, tc.policies)
			if !reflect.DeepEqual(got.Actions, tc.want) {
				t.Fatalf("actions = %v, want %v", got.Actions, tc.want)
			}
			if got.NeedsDrain() != (tc.want[0].Type == Reboot || tc.want[0].Type == Drain) {
				t.Errorf("NeedsDrain = %v for %v", got.NeedsDrain(), got.Actions)
			}
		})
	}
}

func TestPlanExplainsEachChange(t *testing.T) {
	p := Compute(Diff{Files: []string{"/etc/foo"}, KernelArguments: true}, DefaultPolicies())
	if len(p.Causes) != 2 || p.Causes[0].Change != "kernelArguments" || p.Causes[1].Rule != "no file policy matches" {
		t.Fatalf("causes = %+v", p.Causes)
	}
}
