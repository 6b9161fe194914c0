package render

import (
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
)

func TestReconcilability(t *testing.T) {
	base := ign35 + `,"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAA old"]}]},"storage":{"directories":[{"path":"/var/d"}],"links":[{"path":"/etc/l","target":"/etc/x"}],"files":[{"path":"/etc/f","contents":{"source":"data:,1"}}]},"systemd":{"units":[{"name":"u.service","contents":"[Service]\nExecStart=/bin/true\n"}]}}`
	for _, tc := range []struct {
		name    string
		change  string // the new config of MC 50-change
		fips    bool
		allow   Overrides
		culprit string
		want    string // substring of the error; empty = reconcilable
	}{
		{name: "files, units and SSH keys change freely", change: ign35 + `,"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAA new"],"passwordHash":"$6$x"}]},"storage":{"files":[{"path":"/etc/f","contents":{"source":"data:,2"}},{"path":"/etc/g","contents":{"source":"data:,3"}}]},"systemd":{"units":[{"name":"u.service","enabled":true},{"name":"v.service","mask":true}]}}`},
		{name: "removing a link is allowed", change: ign35 + `,"storage":{"files":[{"path":"/etc/l","contents":{"source":"data:,was-a-link"}}]}}`},
		{name: "adding a directory", change: ign35 + `,"storage":{"directories":[{"path":"/var/new"}]}}`, culprit: "50-change", want: `storage.directories: not reconcilable with rendered-worker-old, which nodes run: "/var/new"`},
		{name: "adding a link", change: ign35 + `,"storage":{"links":[{"path":"/etc/new","target":"/etc/x"}]}}`, culprit: "50-change", want: `"/etc/new": links can only be added`},
		{name: "a user other than core", change: ign35 + `,"passwd":{"users":[{"name":"alice"}]}}`, culprit: "50-change", want: `"alice": only the core user`},
		{name: "core's shell", change: ign35 + `,"passwd":{"users":[{"name":"core","shell":"/bin/zsh"}]}}`, culprit: "50-change", want: "only sshAuthorizedKeys and passwordHash of core"},
		{name: "groups", change: ign35 + `,"passwd":{"groups":[{"name":"admins"}]}}`, culprit: "50-change", want: "passwd.groups"},
		{name: "disks", change: ign35 + `,"storage":{"disks":[{"device":"/dev/sdb","wipeTable":true}]}}`, culprit: "50-change", want: "storage.disks"},
		{name: "filesystems", change: ign35 + `,"storage":{"filesystems":[{"device":"/dev/sdb1","format":"xfs","path":"/var/data"}]}}`, culprit: "50-change", want: "storage.filesystems"},
		{name: "disks with the Disks override", change: ign35 + `,"storage":{"disks":[{"device":"/dev/sdb","wipeTable":true}]}}`, allow: Overrides{Disks: true}},
		{name: "filesystems with the Disks override only", change: ign35 + `,"storage":{"filesystems":[{"device":"/dev/sdb1","format":"xfs","path":"/var/data"}]}}`, allow: Overrides{Disks: true}, culprit: "50-change", want: "storage.filesystems"},
		{name: "raid", change: ign35 + `,"storage":{"raid":[{"name":"md0","level":"raid1","devices":["/dev/sdb","/dev/sdc"]}]}}`, culprit: "50-change", want: "storage.raid"},
		{name: "file append", change: ign35 + `,"storage":{"files":[{"path":"/etc/f","append":[{"source":"data:,more"}]}]}}`, culprit: "50-change", want: "append cannot be applied"},
		{name: "force file", change: ign35 + `,"storage":{"files":[{"path":"/run/machine-config-daemon-force","contents":{"source":"data:,"}}]}}`, culprit: "50-change", want: "safety checks"},
		{name: "ignition kernel arguments", change: ign35 + `,"kernelArguments":{"shouldExist":["quiet"]}}`, culprit: "50-change", want: "spec.config.kernelArguments"},
		{name: "fips", change: "", fips: true, culprit: "50-change", want: "spec.fips"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := workerPool(t)
			current := mustRender(t, pool, []*mcfgv1.MachineConfig{rawMC("00-base", "worker", base)}, Options{}).Config
			current.Name = "rendered-worker-old"
			change := rawMC("50-change", "worker", tc.change)
			change.Spec.FIPS = tc.fips
			_, err := Render(pool, []*mcfgv1.MachineConfig{rawMC("00-base", "worker", base), change}, Options{Current: current, Overrides: tc.allow})
			// The controller's way, through a parse cache, twice (the second time served
			// from it), must decide the same.
			cache := NewParseCache(16)
			for range 2 {
				_, cachedErr := Render(pool, []*mcfgv1.MachineConfig{rawMC("00-base", "worker", base), change},
					Options{Current: current, Overrides: tc.allow, Parse: cache.ParseWithWarnings, ParseCurrent: cache.ParseRendered})
				if (err == nil) != (cachedErr == nil) || (err != nil && err.Error() != cachedErr.Error()) {
					t.Fatalf("through the parse cache: %v, without: %v", cachedErr, err)
				}
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("should be reconcilable: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("unreconcilable change was accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), `MachineConfig "`+tc.culprit+`"`) {
				t.Errorf("error %q does not name the culprit %s", err, tc.culprit)
			}
		})
	}
}

func TestRemovedDirectoryNamesNoConfig(t *testing.T) {
	pool := workerPool(t)
	withDir := rawMC("00-base", "worker", ign35+`,"storage":{"directories":[{"path":"/var/d"}]}}`)
	current := mustRender(t, pool, []*mcfgv1.MachineConfig{withDir}, Options{}).Config
	_, err := Render(pool, []*mcfgv1.MachineConfig{rawMC("00-base", "worker", "")}, Options{Current: current})
	if err == nil || strings.Contains(err.Error(), "MachineConfig \"") || !strings.Contains(err.Error(), "/var/d") {
		t.Fatalf("want an error about /var/d naming no MachineConfig, got %v", err)
	}
}
