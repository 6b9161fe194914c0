package render

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestOrderPutsWorkerRoleFirstThenByName(t *testing.T) {
	mcs := []*mcfgv1.MachineConfig{
		rawMC("00-infra", "infra", ""), rawMC("99-worker", "worker", ""), rawMC("50-infra", "infra", ""),
		rawMC("01-worker", "worker", ""), rawMC("10-other", "", ""),
	}
	Order(mcs)
	var got []string
	for _, mc := range mcs {
		got = append(got, mc.Name)
	}
	want := "01-worker 99-worker 00-infra 10-other 50-infra"
	if strings.Join(got, " ") != want {
		t.Fatalf("order = %v, want %s", got, want)
	}
}

func TestSelect(t *testing.T) {
	worker := workerPool(t)
	infra := worker.DeepCopy()
	infra.Name = "infra"
	infra.Spec.MachineConfigSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "machineconfiguration.openshift.io/role", Operator: metav1.LabelSelectorOpIn, Values: []string{"worker", "infra"}}}}
	empty := worker.DeepCopy()
	empty.Spec.MachineConfigSelector = &metav1.LabelSelector{}
	nilSel := worker.DeepCopy()
	nilSel.Spec.MachineConfigSelector = nil

	rendered := rawMC("rendered-worker-abc", "worker", "")
	rendered.OwnerReferences = []metav1.OwnerReference{{Kind: "MachineConfigPool", Name: "worker", Controller: ptr.To(true)}}
	all := []*mcfgv1.MachineConfig{rawMC("99-infra", "infra", ""), rawMC("00-worker", "worker", ""), rawMC("50-master", "master", ""), rendered}

	for _, tc := range []struct {
		name    string
		pool    *mcfgv1.MachineConfigPool
		want    string
		wantErr bool
	}{
		{"worker selects its role only, never rendered configs", worker, "00-worker", false},
		{"custom pool inherits worker, own role last", infra, "00-worker 99-infra", false},
		{"empty selector is refused", empty, "", true},
		{"nil selector is refused", nilSel, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Select(tc.pool, all)
			if tc.wantErr {
				var nsErr *ErrNoSelector
				if !errors.As(err, &nsErr) {
					t.Fatalf("want ErrNoSelector, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, mc := range got {
				names = append(names, mc.Name)
			}
			if strings.Join(names, " ") != tc.want {
				t.Fatalf("selected %v, want %s", names, tc.want)
			}
		})
	}
}

func TestRenderNoMatchingConfigsIsAnError(t *testing.T) {
	_, err := Render(workerPool(t), []*mcfgv1.MachineConfig{rawMC("00-master", "master", "")}, Options{})
	if err == nil || !strings.Contains(err.Error(), "no MachineConfigs match") {
		t.Fatalf("want no-match error, got %v", err)
	}
}

func TestMergeFiles(t *testing.T) {
	for _, tc := range []struct {
		name     string
		configs  []string
		path     string
		source   string
		compress *string
		overwrit bool
	}{
		{
			name: "later MC replaces the file at the same path",
			configs: []string{
				ign35 + `,"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,one"},"mode":420}]}}`,
				ign35 + `,"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,two"}}]}}`,
			},
			path: "/etc/a", source: "data:,two", overwrit: true,
		},
		{
			name: "uncompressed child overrides gzip parent without inheriting compression",
			configs: []string{
				ign35 + `,"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:;base64,H4sIAAAAAAAC/8tIzcnJBwCGphA2BQAAAA==","compression":"gzip"}}]}}`,
				ign35 + `,"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,plain"}}]}}`,
			},
			path: "/etc/a", source: "data:,plain", compress: nil, overwrit: true,
		},
		{
			name: "gzip child keeps its compression",
			configs: []string{
				ign35 + `,"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,plain"}}]}}`,
				ign35 + `,"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:;base64,H4sIAAAAAAAC/8tIzcnJBwCGphA2BQAAAA==","compression":"gzip"}}]}}`,
			},
			path: "/etc/a", source: "data:;base64,H4sIAAAAAAAC/8tIzcnJBwCGphA2BQAAAA==", compress: ptr.To("gzip"), overwrit: true,
		},
		{
			name:    "explicit overwrite false is kept",
			configs: []string{ign35 + `,"storage":{"files":[{"path":"/etc/a","overwrite":false,"contents":{"source":"data:,x"}}]}}`},
			path:    "/etc/a", source: "data:,x", overwrit: false,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mcs []*mcfgv1.MachineConfig
			for i, c := range tc.configs {
				mcs = append(mcs, rawMC(string(rune('a'+i))+"-mc", "worker", c))
			}
			res := mustRender(t, workerPool(t), mcs, Options{})
			f := fileByPath(t, res.Ignition, tc.path)
			if f.Contents.Source == nil || *f.Contents.Source != tc.source {
				t.Errorf("source = %v, want %s", f.Contents.Source, tc.source)
			}
			if (f.Contents.Compression == nil) != (tc.compress == nil) || (tc.compress != nil && *f.Contents.Compression != *tc.compress) {
				t.Errorf("compression = %v, want %v", f.Contents.Compression, tc.compress)
			}
			if f.Overwrite == nil || *f.Overwrite != tc.overwrit {
				t.Errorf("overwrite = %v, want %v", f.Overwrite, tc.overwrit)
			}
		})
	}
}

func TestMergeUnitsUsersAndLinks(t *testing.T) {
	mcs := []*mcfgv1.MachineConfig{
		rawMC("00-base", "worker", ign35+`,
			"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAA first"]}]},
			"storage":{"files":[{"path":"/etc/x","contents":{"source":"data:,file"}}]},
			"systemd":{"units":[{"name":"a.service","contents":"[Service]\nExecStart=/bin/a\n","dropins":[{"name":"10-a.conf","contents":"[Service]\nNice=1\n"}]}]}}`),
		rawMC("10-more", "worker", ign35+`,
			"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAA second","ssh-ed25519 AAAA first"]}]},
			"storage":{"links":[{"path":"/etc/x","target":"/etc/y"}]},
			"systemd":{"units":[{"name":"a.service","enabled":true,"dropins":[{"name":"20-b.conf","contents":"[Service]\nNice=2\n"}]},{"name":"b.service","mask":true}]}}`),
	}
	res := mustRender(t, workerPool(t), mcs, Options{})
	ign := res.Ignition

	keys := ign.Passwd.Users[0].SSHAuthorizedKeys
	if len(ign.Passwd.Users) != 1 || len(keys) != 2 || keys[0] != "ssh-ed25519 AAAA first" || keys[1] != "ssh-ed25519 AAAA second" {
		t.Errorf("SSH keys should be the union, parent order first: %v", keys)
	}
	if len(ign.Storage.Files) != 0 || len(ign.Storage.Links) != 1 {
		t.Errorf("a link at a file's path replaces the file: files=%v links=%v", ign.Storage.Files, ign.Storage.Links)
	}
	if len(ign.Systemd.Units) != 2 {
		t.Fatalf("units = %v", jsonOf(ign.Systemd.Units))
	}
	a := ign.Systemd.Units[0]
	if a.Name != "a.service" || a.Contents == nil || a.Enabled == nil || !*a.Enabled || len(a.Dropins) != 2 {
		t.Errorf("a.service should keep contents, gain enabled and both dropins: %s", jsonOf(a))
	}
}

func TestMergeSpecFields(t *testing.T) {
	generated := rawMC("00-generated", "worker", "")
	generated.Annotations = map[string]string{"machineconfiguration.openshift.io/generated-by-controller-version": "abc"}
	generated.Spec.OSImageURL = "quay.io/release/os@sha256:generated"
	generated.Spec.KernelArguments = []string{"a=1"}
	user1 := rawMC("10-user", "worker", "")
	user1.Spec.OSImageURL = "quay.io/custom/os@sha256:user1"
	user1.Spec.KernelArguments = []string{"b=2 c", "a=1"}
	user1.Spec.KernelType = "realtime"
	user1.Spec.FIPS = true
	user1.Spec.Extensions = []string{"usbguard"}
	user2 := rawMC("20-user", "worker", "")
	user2.Spec.KernelType = "default"
	user2.Spec.BaseOSExtensionsContainerImage = "quay.io/custom/ext@sha256:2"
	user2.Spec.Extensions = []string{"sysstat"}

	res := mustRender(t, workerPool(t), []*mcfgv1.MachineConfig{user2, generated, user1}, Options{
		Defaults: Defaults{OSImageURL: "quay.io/default/os", BaseOSExtensionsContainerImage: "quay.io/default/ext"},
	})
	spec := res.Config.Spec
	if got := strings.Join(spec.KernelArguments, "|"); got != "a=1|b=2 c|a=1" {
		t.Errorf("kernelArguments = %q: concatenated in merge order, duplicates kept", got)
	}
	if !spec.FIPS || spec.KernelType != "realtime" {
		t.Errorf("fips=%v kernelType=%q; want true, realtime (default does not reset)", spec.FIPS, spec.KernelType)
	}
	if spec.OSImageURL != "quay.io/custom/os@sha256:user1" {
		t.Errorf("osImageURL = %q; the user MC wins, generated ones never do", spec.OSImageURL)
	}
	if spec.BaseOSExtensionsContainerImage != "quay.io/custom/ext@sha256:2" {
		t.Errorf("baseOSExtensionsContainerImage = %q", spec.BaseOSExtensionsContainerImage)
	}
	if got := strings.Join(spec.Extensions, ","); got != "usbguard,sysstat" {
		t.Errorf("extensions = %q", got)
	}
	var sources []string
	for _, s := range res.Sources {
		sources = append(sources, s.Name)
	}
	if strings.Join(sources, " ") != "00-generated 10-user 20-user" {
		t.Errorf("sources = %v, want merge order", sources)
	}

	plain := mustRender(t, workerPool(t), []*mcfgv1.MachineConfig{rawMC("00-a", "worker", "")}, Options{Defaults: Defaults{OSImageURL: "quay.io/default/os"}})
	if plain.Config.Spec.OSImageURL != "quay.io/default/os" || plain.Config.Spec.KernelType != "default" {
		t.Errorf("without overrides the pool defaults apply: %+v", plain.Config.Spec)
	}
}

func TestKernelDevelNeedsDefaultKernel(t *testing.T) {
	rt := rawMC("10-rt", "worker", "")
	rt.Spec.KernelType = "realtime"
	dev := rawMC("20-dev", "worker", "")
	dev.Spec.Extensions = []string{"kernel-devel"}
	_, err := Render(workerPool(t), []*mcfgv1.MachineConfig{rt, dev}, Options{})
	if err == nil || !strings.Contains(err.Error(), "kernel-devel") || !strings.Contains(err.Error(), "10-rt") {
		t.Fatalf("want kernel-devel conflict naming 10-rt, got %v", err)
	}
}

func TestValidationErrorsNameConfigFieldAndReason(t *testing.T) {
	for _, tc := range []struct {
		name string
		mc   *mcfgv1.MachineConfig
		want []string
	}{
		{"setuid mode", rawMC("99-bad", "worker", ign35+`,"storage":{"files":[{"path":"/etc/a","mode":2541,"contents":{"source":"data:,x"}}]}}`),
			[]string{`MachineConfig "99-bad"`, "spec.config.storage.files.0.mode", "beyond 0777"}},
		{"remote source", rawMC("99-remote", "worker", ign35+`,"storage":{"files":[{"path":"/etc/a","contents":{"source":"https://example.com/a"}}]}}`),
			[]string{`MachineConfig "99-remote"`, "spec.config.storage.files.0.contents.source", "only inline data: URLs"}},
		{"unknown kernel type", func() *mcfgv1.MachineConfig { m := rawMC("99-kt", "worker", ""); m.Spec.KernelType = "fast"; return m }(),
			[]string{`MachineConfig "99-kt"`, "spec.kernelType", `"fast"`}},
		{"unsupported extension", func() *mcfgv1.MachineConfig {
			m := rawMC("99-ext", "worker", "")
			m.Spec.Extensions = []string{"vim"}
			return m
		}(),
			[]string{`MachineConfig "99-ext"`, "spec.extensions.0", `"vim"`}},
		{"ignition invalid with position", rawMC("99-path", "worker", "{\n  \"ignition\": {\"version\": \"3.5.0\"},\n  \"storage\": {\"files\": [{\"path\": \"relative/path\"}]}\n}"),
			[]string{`MachineConfig "99-path"`, "spec.config.storage.files.0.path", "line 3"}},
		{"unknown version", rawMC("99-v4", "worker", `{"ignition":{"version":"4.0.0"}}`),
			[]string{`MachineConfig "99-v4"`, "version"}},
		{"missing version", rawMC("99-nov", "worker", `{"storage":{}}`),
			[]string{`MachineConfig "99-nov"`, "ignition.version: missing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(workerPool(t), []*mcfgv1.MachineConfig{rawMC("00-ok", "worker", ""), tc.mc}, Options{})
			if err == nil {
				t.Fatal("render succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestEveryInvalidConfigIsReported(t *testing.T) {
	a := rawMC("10-a", "worker", "")
	a.Spec.KernelType = "x"
	b := rawMC("20-b", "worker", "")
	b.Spec.Extensions = []string{"y"}
	_, err := Render(workerPool(t), []*mcfgv1.MachineConfig{a, b}, Options{})
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 2 {
		t.Fatalf("want both errors, got %v", err)
	}
}

func TestRenderedSizeLimit(t *testing.T) {
	big := strings.Repeat("x", MaxRenderedSize)
	_, err := Render(workerPool(t), []*mcfgv1.MachineConfig{rawMC("00-big", "worker", ign35+`,"storage":{"files":[{"path":"/etc/big","contents":{"source":"data:,`+big+`"}}]}}`)}, Options{})
	if err == nil || !strings.Contains(err.Error(), "byte limit") {
		t.Fatalf("want size error, got %v", err)
	}
}

func TestSpec22ConfigsRenderLikeTheirSpec3Equivalent(t *testing.T) {
	v22 := rawMC("00-old", "worker", `{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/etc/old","contents":{"source":"data:,v2"},"mode":420}]},"systemd":{"units":[{"name":"old.service","enabled":true,"contents":"[Service]\nExecStart=/bin/true\n"}]}}`)
	v3 := rawMC("00-old", "worker", ign35+`,"storage":{"files":[{"path":"/etc/old","contents":{"source":"data:,v2"},"mode":420}]},"systemd":{"units":[{"name":"old.service","enabled":true,"contents":"[Service]\nExecStart=/bin/true\n"}]}}`)
	a := mustRender(t, workerPool(t), []*mcfgv1.MachineConfig{v22}, Options{})
	b := mustRender(t, workerPool(t), []*mcfgv1.MachineConfig{v3}, Options{})
	if a.Config.Name != b.Config.Name {
		t.Fatalf("2.2 and 3.5 spellings of one config render differently:\n%s\n%s", a.Config.Spec.Config.Raw, b.Config.Spec.Config.Raw)
	}
}

func TestNameIsContentAddressed(t *testing.T) {
	pool := workerPool(t)
	mcs := []*mcfgv1.MachineConfig{rawMC("00-a", "worker", ign35+`,"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,a"}}]}}`)}
	first := mustRender(t, pool, mcs, Options{})
	again := mustRender(t, pool, mcs, Options{ControllerVersion: "other"})
	if first.Config.Name != again.Config.Name {
		t.Fatal("same content, different names")
	}
	if !strings.HasPrefix(first.Config.Name, "rendered-worker-") || len(first.Config.Name) != len("rendered-worker-")+32 {
		t.Fatalf("name %q", first.Config.Name)
	}
	infra := pool.DeepCopy()
	infra.Name = "infra"
	other := mustRender(t, infra, mcs, Options{})
	if strings.TrimPrefix(other.Config.Name, "rendered-infra-") != strings.TrimPrefix(first.Config.Name, "rendered-worker-") {
		t.Fatal("the pool name must not be part of the hash")
	}
	changed := mustRender(t, pool, []*mcfgv1.MachineConfig{rawMC("00-a", "worker", ign35+`,"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,b"}}]}}`)}, Options{})
	if changed.Config.Name == first.Config.Name {
		t.Fatal("different content, same name")
	}
}

func TestRenderedSizeIsTheObjectsJSONLength(t *testing.T) {
	pool := workerPool(t)
	pool.UID = "1234"
	res := mustRender(t, pool, []*mcfgv1.MachineConfig{rawMC("00-a", "worker", ign35+`,"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,a"}}]}}`)}, Options{ControllerVersion: "v"})
	whole, err := json.Marshal(res.Config)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(res.Config.Spec)
	if got := renderedSize(res.Config, spec); got != len(whole) {
		t.Fatalf("renderedSize = %d, json.Marshal gives %d", got, len(whole))
	}
}

func TestRenderedConfigCarriesOwnerAndVersion(t *testing.T) {
	pool := workerPool(t)
	pool.UID = "1234"
	res := mustRender(t, pool, []*mcfgv1.MachineConfig{rawMC("00-a", "worker", "")}, Options{ControllerVersion: "v1-abc"})
	if res.Config.Annotations["machineconfiguration.openshift.io/generated-by-controller-version"] != "v1-abc" {
		t.Error("missing generated-by-controller-version")
	}
	if len(res.Config.OwnerReferences) != 1 || res.Config.OwnerReferences[0].UID != "1234" || !*res.Config.OwnerReferences[0].Controller {
		t.Errorf("owner references = %+v", res.Config.OwnerReferences)
	}
	if len(res.Config.Labels) != 0 {
		t.Error("rendered configs must carry no role label, or a pool would select them")
	}
}
