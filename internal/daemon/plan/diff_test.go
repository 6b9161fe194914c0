package plan

import (
	"reflect"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func mc(ign string, mutate func(*mcfgv1.MachineConfigSpec)) *mcfgv1.MachineConfig {
	m := &mcfgv1.MachineConfig{Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(ign)}}}
	if mutate != nil {
		mutate(&m.Spec)
	}
	return m
}

const base = `{"ignition":{"version":"3.5.0"},
 "passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 A"]}]},
 "storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,a"}},{"path":"/etc/b","contents":{"source":"data:,b"}}]},
 "systemd":{"units":[{"name":"a.service","contents":"[Unit]"},{"name":"b.service","enabled":true}]}}`

func TestDiffConfigs(t *testing.T) {
	cases := []struct {
		name string
		new  *mcfgv1.MachineConfig
		want Diff
	}{
		{"same", mc(base, nil), Diff{}},
		{"file changed, added, removed", mc(`{"ignition":{"version":"3.5.0"},
		 "passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 A"]}]},
		 "storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,A"}},{"path":"/etc/c","contents":{"source":"data:,c"}}]},
		 "systemd":{"units":[{"name":"a.service","contents":"[Unit]"},{"name":"b.service","enabled":true}]}}`, nil),
			Diff{Files: []string{"/etc/a", "/etc/b", "/etc/c"}}},
		{"unit changed and keys", mc(`{"ignition":{"version":"3.5.0"},
		 "passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 B"],"passwordHash":"$6$x"}]},
		 "storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,a"}},{"path":"/etc/b","contents":{"source":"data:,b"}}]},
		 "systemd":{"units":[{"name":"a.service","contents":"[Unit]"},{"name":"b.service","enabled":false}]}}`, nil),
			Diff{Units: []string{"b.service"}, SSHKeys: true, Password: true, Passwd: true}},
		// OpenShift's sshkey policy covers all of passwd (its diff is !DeepEqual(old.Passwd, new.Passwd)).
		{"another user's entry changed", mc(`{"ignition":{"version":"3.5.0"},
		 "passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 A"]},{"name":"alice"}]},
		 "storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,a"}},{"path":"/etc/b","contents":{"source":"data:,b"}}]},
		 "systemd":{"units":[{"name":"a.service","contents":"[Unit]"},{"name":"b.service","enabled":true}]}}`, nil),
			Diff{Passwd: true}},
		{"an empty list of groups is none", mc(`{"ignition":{"version":"3.5.0"},
		 "passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 A"]}],"groups":[]},
		 "storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,a"}},{"path":"/etc/b","contents":{"source":"data:,b"}}]},
		 "systemd":{"units":[{"name":"a.service","contents":"[Unit]"},{"name":"b.service","enabled":true}]}}`, nil),
			Diff{}},
		{"os fields", mc(base, func(s *mcfgv1.MachineConfigSpec) {
			s.OSImageURL, s.KernelArguments, s.Extensions, s.KernelType, s.FIPS = "quay.io/os@sha256:1", []string{"nosmt"}, []string{"usbguard"}, "realtime", true
		}), Diff{OSImageURL: true, KernelArguments: true, Extensions: true, KernelType: true, FIPS: true}},
		{"empty and default are the same", mc(base, func(s *mcfgv1.MachineConfigSpec) {
			s.KernelArguments, s.Extensions, s.KernelType = []string{}, []string{}, "default"
		}), Diff{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DiffConfigs(mc(base, nil), tc.new)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("diff = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDiffFromNothing(t *testing.T) {
	got, err := DiffConfigs(nil, mc(base, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Files, []string{"/etc/a", "/etc/b"}) || !got.SSHKeys {
		t.Fatalf("diff = %+v", got)
	}
}
