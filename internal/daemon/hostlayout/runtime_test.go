package hostlayout

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/containerdhosts"
	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/plan"
)

const mirroredRegistries = `unqualified-search-registries = ["docker.io"]

[[registry]]
  prefix = ""
  location = "example.invalid/mco/pause"

  [[registry.mirror]]
    location = "127.0.0.1:5000/mco/pause"
    pull-from-mirror = "digest-only"
`

const blockedRegistries = `[[registry]]
  prefix = ""
  location = "untrusted.example.com"
  blocked = true
`

const readsCertsDir = `version = 2
[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "/etc/containerd/certs.d"
`

func registriesSet(conf string, more ...nodefiles.Entry) nodefiles.Set {
	entries := append([]nodefiles.Entry{{Path: plan.RegistriesConfPath, Data: []byte(conf), Perm: 0o644}}, more...)
	slices.SortFunc(entries, func(a, b nodefiles.Entry) int { return strings.Compare(a.Path, b.Path) })
	return nodefiles.Set{Entries: entries}
}

func containerd(config string) Runtime {
	return Runtime{Name: RuntimeContainerd, Version: "containerd://1.6.20", ContainerdConfig: []byte(config)}
}

func TestRuntimeOf(t *testing.T) {
	for in, want := range map[string]string{"containerd://1.6.20": RuntimeContainerd, "cri-o://1.33.2": RuntimeCRIO, "": "", "docker": ""} {
		if got := RuntimeOf(in).Name; got != want {
			t.Errorf("RuntimeOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDeriveHostsTOMLOnContainerdOnly(t *testing.T) {
	set := registriesSet(mirroredRegistries)
	derived, err := Derive(containerd(readsCertsDir), set)
	if err != nil {
		t.Fatal(err)
	}
	if len(derived) != 1 || derived[0].Path != containerdhosts.CertsDir+"/example.invalid/hosts.toml" ||
		!strings.Contains(string(derived[0].Data), "127.0.0.1:5000") || !containerdhosts.GeneratedByMCO(derived[0].Data) {
		t.Fatalf("derived %+v", derived)
	}
	with := WithDerived(set, derived)
	if _, ok := with.Lookup(derived[0].Path); !ok {
		t.Fatal("WithDerived left the set unsorted or without the file")
	}
	if _, ok := with.Lookup(plan.RegistriesConfPath); !ok {
		t.Fatal("WithDerived lost registries.conf")
	}
	for _, rt := range []Runtime{{Name: RuntimeCRIO, Version: "cri-o://1.33.2"}, {}} {
		if d, err := Derive(rt, set); d != nil || err != nil {
			t.Errorf("%q: derived %v %v; CRI-O reads registries.conf itself", rt.Name, d, err)
		}
	}
	if d, err := Derive(containerd(readsCertsDir), nodefiles.Set{}); d != nil || err != nil {
		t.Errorf("no registries.conf: %v %v", d, err)
	}
}

func TestDeriveRefusesWhatContainerdCannotDo(t *testing.T) {
	for name, c := range map[string]struct {
		rt   Runtime
		set  nodefiles.Set
		want []string
	}{
		"blocked registry": {containerd(readsCertsDir), registriesSet(blockedRegistries), []string{"untrusted.example.com", "blocked"}},
		"containerd does not read certs.d": {containerd("version = 2\n"), registriesSet(mirroredRegistries),
			[]string{"config_path", "/etc/containerd/certs.d/<registry>/hosts.toml"}},
		"a MachineConfig writes the file too": {containerd(readsCertsDir), registriesSet(mirroredRegistries,
			nodefiles.Entry{Path: containerdhosts.CertsDir + "/example.invalid/hosts.toml", Data: []byte("x")}), []string{"keep one"}},
	} {
		t.Run(name, func(t *testing.T) {
			derived, err := Derive(c.rt, c.set)
			var de *DerivedError
			if !errors.As(err, &de) || derived != nil {
				t.Fatalf("Derive = %v, %v; want a *DerivedError and nothing derived", derived, err)
			}
			for _, w := range append(c.want, "container runtime is containerd") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestAdjustDiffContainerdNeedsNoDisruptionForMirrors(t *testing.T) {
	d := plan.Diff{Files: []string{"/etc/chrony.conf", plan.RegistriesConfPath, containerdhosts.CertsDir + "/quay.io/hosts.toml"},
		RegistriesConf: &plan.Contents{New: []byte(mirroredRegistries)}}
	crio := d
	crio.Files = slices.Clone(d.Files)
	AdjustDiff(Runtime{Name: RuntimeCRIO}, &crio)
	if len(crio.Files) != 3 || crio.RegistriesConf == nil {
		t.Errorf("CRI-O's diff changed: %+v", crio)
	}
	AdjustDiff(containerd(readsCertsDir), &d)
	if !slices.Equal(d.Files, []string{"/etc/chrony.conf"}) || d.RegistriesConf != nil {
		t.Errorf("containerd's diff: %+v", d)
	}
}

func TestDerivedOnHostFindsWhatMCOWrote(t *testing.T) {
	set := registriesSet(mirroredRegistries)
	derived, err := Derive(containerd(readsCertsDir), set)
	if err != nil {
		t.Fatal(err)
	}
	host := map[string][]byte{derived[0].Path: derived[0].Data}
	read := func(p string) ([]byte, error) {
		if d, ok := host[p]; ok {
			return d, nil
		}
		return nil, errors.New("no such file")
	}
	if got := DerivedOnHost(set, read); len(got) != 1 || got[0].Path != derived[0].Path {
		t.Fatalf("DerivedOnHost = %+v", got)
	}
	host[derived[0].Path] = []byte("server = \"https://example.invalid\"\n") // the admin's own
	if got := DerivedOnHost(set, read); len(got) != 0 {
		t.Fatalf("DerivedOnHost claimed the admin's file: %+v", got)
	}
}

func TestAdjustPlanDropsCRIOActionsOnContainerd(t *testing.T) {
	d := plan.Diff{Files: []string{"/etc/containers/policy.json", "/etc/kubernetes/kubelet.conf.d/50-machineconfiguration.conf"}}
	pl := plan.Compute(d, plan.DefaultPolicies())
	if pl.String() != "Reload crio.service, Restart kubelet.service" {
		t.Fatalf("the default plan is %q; this test assumes OpenShift's crio reload", pl.String())
	}
	crio := pl
	AdjustPlan(Runtime{Name: RuntimeCRIO}, &crio)
	if crio.String() != pl.String() {
		t.Errorf("CRI-O's plan changed: %q", crio.String())
	}
	AdjustPlan(containerd(readsCertsDir), &pl)
	if pl.String() != "Restart kubelet.service" || !strings.Contains(pl.Causes[0].Rule, "no CRI-O") {
		t.Errorf("containerd's plan %q, causes %+v", pl.String(), pl.Causes)
	}
}

func TestPolicyRestrictionsAreRefusedOnContainerd(t *testing.T) {
	defaultPolicy := `{"default":[{"type":"insecureAcceptAnything"}],"transports":{"docker-daemon":{"":[{"type":"insecureAcceptAnything"}]}}}`
	allowed := `{"default":[{"type":"reject"}],"transports":{"atomic":{"quay.io":[{"type":"insecureAcceptAnything"}]},` +
		`"docker":{"quay.io":[{"type":"insecureAcceptAnything"}],"registry.example.com":[{"type":"signedBy","keyType":"GPGKeys"}]},` +
		`"docker-daemon":{"":[{"type":"insecureAcceptAnything"}]}}}`
	policy := func(data string) nodefiles.Set {
		return nodefiles.Set{Entries: []nodefiles.Entry{{Path: PolicyJSONPath, Data: []byte(data), Perm: 0o644}}}
	}
	if d, err := Derive(containerd(readsCertsDir), policy(defaultPolicy)); d != nil || err != nil {
		t.Errorf("the default policy: %v %v", d, err)
	}
	if d, err := Derive(Runtime{Name: RuntimeCRIO}, policy(allowed)); d != nil || err != nil {
		t.Errorf("CRI-O enforces it: %v %v", d, err)
	}
	_, err := Derive(containerd(readsCertsDir), policy(allowed))
	var de *DerivedError
	if !errors.As(err, &de) {
		t.Fatalf("Derive = %v, want a *DerivedError", err)
	}
	for _, want := range []string{"does not read /etc/containers/policy.json", "default: reject", "docker registry.example.com: signedBy", "allowedRegistries"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
