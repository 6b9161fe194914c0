package changeplan

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/daemon/plan"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/render"
)

const registriesBefore = `unqualified-search-registries = ["registry.example.org"]
[[registry]]
  location = "apps.example.org/team/app"
  [[registry.mirror]]
    location = "mirror.example.net/team/app"
`

// registriesDigestMirror adds a registry whose only mirror serves pulls by digest: OpenShift's
// Special rule reloads crio without a drain for it.
const registriesDigestMirror = registriesBefore + `
[[registry]]
  location = "apps.example.org/team/db"
  [[registry.mirror]]
    location = "mirror.example.net/team/db"
    pull-from-mirror = "digest-only"
`

// registriesBlocked blocks a registry: that drains.
const registriesBlocked = registriesBefore + `
[[registry]]
  location = "apps.example.org/team/db"
  blocked = true
`

func file(path, data string) map[string]any {
	return map[string]any{"path": path, "mode": 420, "contents": map[string]any{"source": "data:," + url.PathEscape(data)}}
}

func unit(name, contents string) map[string]any {
	return map[string]any{"name": name, "enabled": true, "contents": contents}
}

// mc builds a worker MachineConfig from Ignition sections (storage.files, systemd.units,
// passwd.users, ...) given as plain maps.
func mc(t *testing.T, name string, ign map[string]any, kargs ...string) *mcfgv1.MachineConfig {
	t.Helper()
	ign["ignition"] = map[string]any{"version": "3.5.0"}
	raw, err := json.Marshal(ign)
	if err != nil {
		t.Fatal(err)
	}
	m := &mcfgv1.MachineConfig{Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: raw}, KernelArguments: kargs}}
	m.Name = name
	m.Labels = map[string]string{"machineconfiguration.openshift.io/role": "worker"}
	return m
}

func files(fs ...map[string]any) map[string]any {
	list := make([]any, len(fs))
	for i, f := range fs {
		list[i] = f
	}
	return map[string]any{"storage": map[string]any{"files": list}}
}

func TestCompute(t *testing.T) {
	base := mc(t, "00-worker", map[string]any{
		"storage": map[string]any{"files": []any{
			file("/etc/chrony.conf", "server a.example.org\n"),
			file("/etc/containers/registries.conf", registriesBefore),
			file("/etc/pki/app/app-key.pem", "PRIVATE one\n"),
		}},
		"systemd": map[string]any{"units": []any{unit("app.service", "[Service]\nExecStart=/usr/bin/app\n")}},
		"passwd":  map[string]any{"users": []any{map[string]any{"name": "core", "sshAuthorizedKeys": []string{"ssh-ed25519 AAAA one"}}}},
	}, "quiet")
	pool, err := pools.Builtin("worker")
	if err != nil {
		t.Fatal(err)
	}
	current, err := render.Render(pool, []*mcfgv1.MachineConfig{base}, render.Options{})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		change *mcfgv1.MachineConfig
		policy plan.Policies
		// want
		disruption     string
		drain, reboot  bool
		files, units   []string
		diffHas        []string // substrings of the diffs of all changes
		diffLacks      []string
		kargsAdded     []string
		unreconcilable string
		refused        string
	}{
		{name: "nothing changes", disruption: "none"},
		{
			name:       "file without a policy reboots",
			change:     mc(t, "99-chrony", files(file("/etc/chrony.conf", "server b.example.org\n"))),
			disruption: "drain+reboot", drain: true, reboot: true,
			files:   []string{"/etc/chrony.conf"},
			diffHas: []string{"--- a/etc/chrony.conf", "-server a.example.org", "+server b.example.org"},
		},
		{
			name:       "file with an admin policy restarts",
			change:     mc(t, "99-chrony", files(file("/etc/chrony.conf", "server b.example.org\n"))),
			policy:     withFilePolicy("/etc/chrony.conf", plan.Action{Type: plan.Restart, Unit: "chronyd.service"}),
			disruption: "restart chronyd.service",
			files:      []string{"/etc/chrony.conf"},
		},
		{
			name:       "registries.conf digest-only mirror reloads crio without a drain",
			change:     mc(t, "99-registries", files(file("/etc/containers/registries.conf", registriesDigestMirror))),
			disruption: "reload crio.service",
			files:      []string{"/etc/containers/registries.conf"},
			diffHas:    []string{`+    pull-from-mirror = "digest-only"`},
		},
		{
			name:       "registries.conf blocking a registry drains then reloads crio",
			change:     mc(t, "99-registries", files(file("/etc/containers/registries.conf", registriesBlocked))),
			disruption: "drain, reload crio.service", drain: true,
			files: []string{"/etc/containers/registries.conf"},
		},
		{
			name: "SSH key needs nothing",
			change: mc(t, "99-ssh", map[string]any{"passwd": map[string]any{"users": []any{
				map[string]any{"name": "core", "sshAuthorizedKeys": []string{"ssh-ed25519 AAAA two"}}}}}),
			disruption: "none",
		},
		{
			name:       "kernel argument reboots and is listed",
			change:     mc(t, "99-kargs", map[string]any{}, "audit=1"),
			disruption: "drain+reboot", drain: true, reboot: true,
			kargsAdded: []string{"audit=1"},
		},
		{
			name:       "kernel arguments are listed one by one, as the agent stages them",
			change:     mc(t, "99-kargs", map[string]any{}, "audit=1 nosmt"),
			disruption: "drain+reboot", drain: true, reboot: true,
			kargsAdded: []string{"audit=1", "nosmt"},
		},
		{
			name: "unit change reboots by default and shows the unit diff",
			change: mc(t, "99-app", map[string]any{"systemd": map[string]any{"units": []any{
				unit("app.service", "[Service]\nExecStart=/usr/bin/app --verbose\n")}}}),
			disruption: "drain+reboot", drain: true, reboot: true,
			units:   []string{"app.service"},
			diffHas: []string{"-ExecStart=/usr/bin/app", "+ExecStart=/usr/bin/app --verbose", "# enabled: true"},
		},
		{
			name:       "secret file is shown as hashes",
			change:     mc(t, "99-key", files(file("/etc/pki/app/app-key.pem", "PRIVATE two\n"))),
			policy:     withFilePolicy("/etc/pki/app", plan.Action{Type: plan.None}),
			disruption: "none",
			files:      []string{"/etc/pki/app/app-key.pem"},
			diffLacks:  []string{"PRIVATE"},
		},
		{
			name:       "registries.conf containers/image cannot read is refused by the agent",
			change:     mc(t, "99-registries", files(file("/etc/containers/registries.conf", "[[registry]\n"))),
			disruption: "refused", drain: true,
			files:   []string{"/etc/containers/registries.conf"},
			refused: "the new config's /etc/containers/registries.conf cannot be read by containers/image",
		},
		{
			name:           "a disk added is unreconcilable",
			change:         mc(t, "99-disk", map[string]any{"storage": map[string]any{"disks": []any{map[string]any{"device": "/dev/sdb", "wipeTable": true}}}}),
			disruption:     "refused",
			unreconcilable: "storage.disks",
		},
		{
			name:       "a disk added under the Disks override changes nothing on the nodes",
			change:     mc(t, "99-disk", map[string]any{"storage": map[string]any{"disks": []any{map[string]any{"device": "/dev/sdb", "wipeTable": true}}}}),
			policy:     withOverrides(render.Overrides{Disks: true}),
			disruption: "none",
		},
		{
			name: "a new user is unreconcilable",
			change: mc(t, "99-user", map[string]any{"passwd": map[string]any{"users": []any{
				map[string]any{"name": "alice"}}}}),
			disruption:     "refused",
			unreconcilable: "passwd.users",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mcs := []*mcfgv1.MachineConfig{base}
			if tt.change != nil {
				mcs = append(mcs, tt.change)
			}
			policy := tt.policy
			if policy.Files == nil {
				policy = plan.DefaultPolicies()
			}
			got, err := Compute(Input{Pool: pool, Current: current.Config, MachineConfigs: mcs, Policies: policy})
			if err != nil {
				t.Fatal(err)
			}
			if got.Disruption != tt.disruption || got.Drain != tt.drain || got.Reboot != tt.reboot {
				t.Errorf("disruption %q drain %v reboot %v, want %q %v %v (causes %+v)", got.Disruption, got.Drain, got.Reboot, tt.disruption, tt.drain, tt.reboot, got.Causes)
			}
			if names := changeNames(got.Files); !slices.Equal(names, tt.files) {
				t.Errorf("files %v, want %v", names, tt.files)
			}
			if names := changeNames(got.Units); !slices.Equal(names, tt.units) {
				t.Errorf("units %v, want %v", names, tt.units)
			}
			var diffs strings.Builder
			for _, c := range append(got.Files, got.Units...) {
				diffs.WriteString(c.Diff)
			}
			for _, s := range tt.diffHas {
				if !strings.Contains(diffs.String(), s) {
					t.Errorf("diffs lack %q:\n%s", s, diffs.String())
				}
			}
			for _, s := range tt.diffLacks {
				if strings.Contains(diffs.String(), s) {
					t.Errorf("diffs show %q:\n%s", s, diffs.String())
				}
			}
			var added []string
			if got.KernelArguments != nil {
				added = got.KernelArguments.Added
			}
			if !slices.Equal(added, tt.kargsAdded) {
				t.Errorf("kernel arguments added %v, want %v", added, tt.kargsAdded)
			}
			joined := strings.Join(got.Unreconcilable, "\n")
			if (tt.unreconcilable == "") != (joined == "") || !strings.Contains(joined, tt.unreconcilable) {
				t.Errorf("unreconcilable %q, want one mentioning %q", joined, tt.unreconcilable)
			}
			refused := strings.Join(got.Refused, "\n")
			if (tt.refused == "") != (refused == "") || !strings.Contains(refused, tt.refused) {
				t.Errorf("refused %q, want one mentioning %q", refused, tt.refused)
			}
			if unchanged := tt.change == nil; unchanged != (got.Rendered == got.Current) {
				t.Errorf("rendered %s, current %s", got.Rendered, got.Current)
			}
		})
	}
}

func TestComputeHashesSecretFiles(t *testing.T) {
	pool, _ := pools.Builtin("worker")
	before := mc(t, "00-worker", files(file("/etc/kubernetes/kubeconfig", "token: one\n")))
	current, err := render.Render(pool, []*mcfgv1.MachineConfig{before}, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	after := mc(t, "00-worker", files(file("/etc/kubernetes/kubeconfig", "token: two\n")))
	got, err := Compute(Input{Pool: pool, Current: current.Config, MachineConfigs: []*mcfgv1.MachineConfig{after}, Policies: plan.DefaultPolicies()})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != 1 {
		t.Fatalf("files %+v", got.Files)
	}
	f := got.Files[0]
	// sha256 of "token: one\n" and "token: two\n".
	if f.Hashed != "secret" || f.OldSHA256 != sha([]byte("token: one\n")) || f.NewSHA256 != sha([]byte("token: two\n")) || f.OldSHA256 == f.NewSHA256 {
		t.Errorf("got %+v, want both sides hashed", f)
	}
	if strings.Contains(f.Diff, "token:") {
		t.Errorf("diff shows the secret:\n%s", f.Diff)
	}
}

func TestIsSecretPath(t *testing.T) {
	for path, want := range map[string]bool{
		"/var/lib/kubelet/config.json":        true,
		"/etc/kubernetes/kubeconfig":          true,
		"/etc/pki/tls/private/server.key":     true,
		"/etc/ssl/ca.PEM":                     true,
		"/etc/app/pull-secret.json":           true,
		"/etc/app/bootstrap-token":            true,
		"/etc/chrony.conf":                    false,
		"/etc/containers/registries.conf":     false,
		"/etc/kubernetes/kubelet-ca.crt":      false,
		"/etc/systemd/system/kubelet.service": false,
	} {
		if got := IsSecretPath(path); got != want {
			t.Errorf("IsSecretPath(%s) = %v, want %v", path, got, want)
		}
	}
}

func TestComputeRefusesAnUnrenderablePool(t *testing.T) {
	pool, _ := pools.Builtin("worker")
	current := mc(t, "rendered-worker-x", map[string]any{})
	bad := mc(t, "99-bad", map[string]any{})
	bad.Spec.Config.Raw = []byte(`{"ignition":{"version":"9.9.9"}}`)
	if _, err := Compute(Input{Pool: pool, Current: current, MachineConfigs: []*mcfgv1.MachineConfig{bad}, Policies: plan.DefaultPolicies()}); err == nil || !strings.Contains(err.Error(), "99-bad") {
		t.Errorf("err = %v, want one naming 99-bad", err)
	}
}

func withFilePolicy(path string, actions ...plan.Action) plan.Policies {
	p := plan.DefaultPolicies()
	p.Files = append(p.Files, plan.FilePolicy{Path: path, Actions: actions})
	return p
}

func changeNames(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func TestUnified(t *testing.T) {
	tests := []struct {
		name, old, new   string
		oldFound, newFnd bool
		want             string
	}{
		{"added", "", "a\nb\n", false, true, "--- /dev/null\n+++ b/etc/x\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"removed", "a\n", "", true, false, "--- a/etc/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"},
		{"changed", "a\nb\nc\n", "a\nB\nc\n", true, true, "--- a/etc/x\n+++ b/etc/x\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"same", "a\n", "a\n", true, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unified("/etc/x", tt.old, tt.new, tt.oldFound, tt.newFnd); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestSummaryWords(t *testing.T) {
	for n, want := range map[int]string{0: "0 files", 1: "1 file", 2: "2 files"} {
		if got := count(n, "file"); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
	p := plan.Plan{Actions: []plan.Action{{Type: plan.DaemonReload}, {Type: plan.Restart, Unit: "chronyd.service"}}}
	if got, want := disruption(p), "daemon-reload, restart chronyd.service"; got != want {
		t.Errorf("disruption = %q, want %q", got, want)
	}
}

// Only what the agent's diff finds changed is listed: kernel type "" is "default" on the node.
func TestFieldChangesFollowTheAgentsDiff(t *testing.T) {
	old := mcfgv1.MachineConfigSpec{KernelType: ""}
	same := mcfgv1.MachineConfigSpec{KernelType: "default"}
	if got := fieldChanges(old, same, plan.DiffParsed(old, same, ignition.Empty(), ignition.Empty())); len(got) != 0 {
		t.Errorf("kernel type \"\" → default listed as %+v", got)
	}
	rt := mcfgv1.MachineConfigSpec{KernelType: "realtime"}
	got := fieldChanges(old, rt, plan.DiffParsed(old, rt, ignition.Empty(), ignition.Empty()))
	if len(got) != 1 || got[0] != (FieldChange{Field: "kernelType", Old: "default", New: "realtime"}) {
		t.Errorf("kernel type change listed as %+v", got)
	}
}

// Between compares two rendered configs directly, as the paused-pool condition does; it must
// agree with Compute rendering the same change.
func TestBetweenAgreesWithCompute(t *testing.T) {
	pool, _ := pools.Builtin("worker")
	before := mc(t, "00-worker", files(file("/etc/motd", "hello\n")))
	after := mc(t, "00-worker", files(file("/etc/motd", "hello again\n")), "audit=1")
	opts := render.Options{}
	cur, err := render.Render(pool, []*mcfgv1.MachineConfig{before}, opts)
	if err != nil {
		t.Fatal(err)
	}
	next, err := render.Render(pool, []*mcfgv1.MachineConfig{after}, opts)
	if err != nil {
		t.Fatal(err)
	}
	viaRender, err := Compute(Input{Pool: pool, Current: cur.Config, MachineConfigs: []*mcfgv1.MachineConfig{after}, Policies: plan.DefaultPolicies()})
	if err != nil {
		t.Fatal(err)
	}
	direct, err := Between("worker", cur.Config, next.Config, plan.DefaultPolicies())
	if err != nil {
		t.Fatal(err)
	}
	if direct.Disruption != "drain+reboot" || direct.Disruption != viaRender.Disruption ||
		!slices.Equal(changeNames(direct.Files), changeNames(viaRender.Files)) || direct.KernelArguments == nil ||
		direct.Rendered != viaRender.Rendered {
		t.Fatalf("Between %+v\nCompute %+v", direct, viaRender)
	}
	if strings.Contains(direct.Summary, "from 0") {
		t.Errorf("summary names sources it does not have: %q", direct.Summary)
	}
}

func withOverrides(allow render.Overrides) plan.Policies {
	p := plan.DefaultPolicies()
	p.Irreconcilable = allow
	return p
}

// OpenShift applies the sshkey policy to any change to passwd: removing another user's entry
// (which an install-time config may have) plans the sshkey policy's actions, here a reboot.
func TestAnotherUsersChangeUsesTheSSHKeyPolicy(t *testing.T) {
	current := mc(t, "rendered-worker-a", map[string]any{"passwd": map[string]any{"users": []any{
		map[string]any{"name": "core", "sshAuthorizedKeys": []string{"ssh-ed25519 AAAA one"}}, map[string]any{"name": "alice"}}}})
	next := mc(t, "rendered-worker-b", map[string]any{"passwd": map[string]any{"users": []any{
		map[string]any{"name": "core", "sshAuthorizedKeys": []string{"ssh-ed25519 AAAA one"}}}}})
	policies := plan.DefaultPolicies()
	policies.SSHKey = []plan.Action{{Type: plan.Reboot}}
	p, err := Between("worker", current, next, policies)
	if err != nil {
		t.Fatal(err)
	}
	if p.Disruption != "drain+reboot" || !p.UsersChanged || p.SSHKeysChanged || !strings.Contains(p.Summary, "passwd users") {
		t.Fatalf("plan %+v", p)
	}
}
