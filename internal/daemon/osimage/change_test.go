package osimage

import (
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
)

func TestParseCmdline(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", []string{}},
		{"  \n", []string{}},
		{"BOOT_IMAGE=/vmlinuz root=UUID=1 ro quiet\n", []string{"BOOT_IMAGE=/vmlinuz", "root=UUID=1", "ro", "quiet"}},
		{`a=1  b="x y"	c`, []string{"a=1", `b="x y"`, "c"}},
		{`"quoted whole" z`, []string{`"quoted whole"`, "z"}},
		{`open="no end`, []string{`open="no end`}},
	} {
		if got := ParseCmdline(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseCmdline(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestChangeBetween(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new mcfgv1.MachineConfigSpec
		want     Change
	}{
		{"nothing", mcfgv1.MachineConfigSpec{KernelArguments: []string{}}, mcfgv1.MachineConfigSpec{},
			Change{KernelType: "default"}},
		{"kernel type empty is default", mcfgv1.MachineConfigSpec{KernelType: ""}, mcfgv1.MachineConfigSpec{KernelType: "default"},
			Change{KernelType: "default"}},
		{"image", mcfgv1.MachineConfigSpec{OSImageURL: "a"}, mcfgv1.MachineConfigSpec{OSImageURL: "b"},
			Change{OSImageURL: "b", KernelType: "default"}},
		{"image dropped keeps the image", mcfgv1.MachineConfigSpec{OSImageURL: "a"}, mcfgv1.MachineConfigSpec{},
			Change{KernelType: "default"}},
		{"kernel arguments split per argument", mcfgv1.MachineConfigSpec{KernelArguments: []string{"a=1 b"}},
			mcfgv1.MachineConfigSpec{KernelArguments: []string{"a=1", "c"}},
			Change{KernelArgs: true, OldKernelArgs: []string{"a=1", "b"}, NewKernelArgs: []string{"a=1", "c"}, KernelType: "default"}},
		{"kernel arguments reordered", mcfgv1.MachineConfigSpec{KernelArguments: []string{"a", "b"}},
			mcfgv1.MachineConfigSpec{KernelArguments: []string{"b", "a"}},
			Change{KernelArgs: true, OldKernelArgs: []string{"a", "b"}, NewKernelArgs: []string{"b", "a"}, KernelType: "default"}},
		{"kernel type", mcfgv1.MachineConfigSpec{}, mcfgv1.MachineConfigSpec{KernelType: "realtime"},
			Change{KernelType: "realtime", KernelTypeChanged: true}},
		{"kernel type kept is still named", mcfgv1.MachineConfigSpec{KernelType: "realtime", OSImageURL: "a"},
			mcfgv1.MachineConfigSpec{KernelType: "realtime", OSImageURL: "b"},
			Change{OSImageURL: "b", KernelType: "realtime"}},
		{"extensions", mcfgv1.MachineConfigSpec{Extensions: []string{"usbguard"}}, mcfgv1.MachineConfigSpec{Extensions: []string{"usbguard", "sysstat"}},
			Change{ExtensionsChanged: true, OldExtensions: []string{"usbguard"}, NewExtensions: []string{"usbguard", "sysstat"}, KernelType: "default"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ChangeBetween(tc.old, tc.new)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			if got.Empty() != (tc.want.OSImageURL == "" && !tc.want.KernelArgs && !tc.want.KernelTypeChanged && !tc.want.ExtensionsChanged) {
				t.Errorf("Empty() = %v", got.Empty())
			}
		})
	}
}

// fakeBackend supports the listed fields.
type fakeBackend struct {
	None
	name   string
	fields []string
}

func (f fakeBackend) Name() string { return f.name }
func (f fakeBackend) Supports(field string) bool {
	for _, s := range f.fields {
		if s == field {
			return true
		}
	}
	return false
}

func TestRefuse(t *testing.T) {
	pkg := NewPackage("/", KernelInstall, nil)
	all := fakeBackend{name: "all", fields: []string{FieldOSImageURL, FieldKernelArguments, FieldExtensions, FieldKernelType, FieldFIPS}}
	for _, tc := range []struct {
		name    string
		b       Backend
		c       Change
		next    mcfgv1.MachineConfigSpec
		want    string // "" for nil
		wantErr *UnsupportedError
	}{
		{name: "nothing to do on none", b: None{}, c: Change{KernelType: "default"}},
		{name: "kernel arguments on package", b: pkg, c: Change{KernelArgs: true, NewKernelArgs: []string{"audit=1"}}},
		{name: "kernel type on package", b: pkg, c: Change{KernelType: "realtime", KernelTypeChanged: true},
			want: `kernelType: "realtime" cannot be applied on this host: OS backend "package (kernel-install)" has no way to switch kernels; nothing was written`},
		{name: "first field in order wins", b: None{},
			c:       Change{OSImageURL: "quay.io/os:1", KernelArgs: true, NewKernelArgs: []string{"a"}, KernelType: "realtime", KernelTypeChanged: true},
			wantErr: &UnsupportedError{Field: FieldOSImageURL, Value: "quay.io/os:1", Backend: "none", Reason: "cannot switch OS images"}},
		{name: "kernel arguments before extensions", b: None{},
			c:       Change{KernelArgs: true, NewKernelArgs: []string{"a", "b=2"}, ExtensionsChanged: true, NewExtensions: []string{"usbguard"}},
			wantErr: &UnsupportedError{Field: FieldKernelArguments, Value: "a b=2", Backend: "none", Reason: "cannot change kernel arguments"}},
		{name: "removing every kernel argument", b: None{}, c: Change{KernelArgs: true, OldKernelArgs: []string{"a"}},
			want: `kernelArguments: (none) cannot be applied on this host: OS backend "none" cannot change kernel arguments; nothing was written`},
		{name: "extensions on package", b: pkg, c: Change{ExtensionsChanged: true, NewExtensions: []string{"usbguard", "kerberos"}},
			wantErr: &UnsupportedError{Field: FieldExtensions, Value: "usbguard, kerberos", Backend: "package (kernel-install)", Reason: "cannot install or remove extensions"}},
		{name: "unknown extension", b: all, c: Change{ExtensionsChanged: true, NewExtensions: []string{"usbguard", "emacs"}},
			wantErr: &UnsupportedError{Field: FieldExtensions, Value: "emacs", Backend: "all",
				Reason: "knows no such extension (known: ipsec, kerberos, kernel-devel, sandboxed-containers, sysstat, two-node-ha, usbguard, wasm)"}},
		{name: "unknown kernel type", b: all, c: Change{KernelType: "lowlatency", KernelTypeChanged: true},
			wantErr: &UnsupportedError{Field: FieldKernelType, Value: "lowlatency", Backend: "all", Reason: "knows no such kernel type (known: default, realtime, 64k-pages)"}},
		{name: "back to the default kernel", b: all, c: Change{KernelType: "default", KernelTypeChanged: true}},
		{name: "fips on package", b: pkg, c: Change{}, next: mcfgv1.MachineConfigSpec{FIPS: true},
			want: `fips: "true" cannot be applied on this host: OS backend "package (kernel-install)" cannot run this host in FIPS mode; nothing was written`},
		{name: "fips where supported", b: all, next: mcfgv1.MachineConfigSpec{FIPS: true}},
		{name: "unchanged kernel type is not refused", b: pkg, c: Change{KernelType: "realtime"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Refuse(tc.b, tc.c, tc.next)
			switch {
			case tc.want == "" && tc.wantErr == nil:
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
			case tc.wantErr != nil:
				var ue *UnsupportedError
				if !errors.As(err, &ue) || *ue != *tc.wantErr {
					t.Fatalf("got %#v, want %#v", err, tc.wantErr)
				}
			default:
				if err == nil || err.Error() != tc.want {
					t.Fatalf("got  %v\nwant %s", err, tc.want)
				}
			}
		})
	}
	if runtime.GOARCH != "arm64" {
		err := Refuse(all, Change{KernelType: "64k-pages", KernelTypeChanged: true}, mcfgv1.MachineConfigSpec{})
		if err == nil || !strings.Contains(err.Error(), "only on aarch64 hosts, this one is "+runtime.GOARCH) {
			t.Errorf("64k-pages off aarch64: %v", err)
		}
	}
}

func TestVerify(t *testing.T) {
	cmdline := ParseCmdline(`BOOT_IMAGE=/vmlinuz root=/dev/vda1 audit=1 nosmt foo="a b"`)
	for _, tc := range []struct {
		name string
		spec mcfgv1.MachineConfigSpec
		b    Booted
		want []string
	}{
		{"empty config, nothing known", mcfgv1.MachineConfigSpec{}, Booted{}, nil},
		{"kernel arguments present", mcfgv1.MachineConfigSpec{KernelArguments: []string{"audit=1 nosmt", `foo="a b"`}}, Booted{KernelArgs: cmdline}, nil},
		{"kernel argument missing", mcfgv1.MachineConfigSpec{KernelArguments: []string{"audit=1 mitigations=off", "x"}}, Booted{KernelArgs: cmdline},
			[]string{`kernelArguments: "mitigations=off" is not on the booted kernel command line`, `kernelArguments: "x" is not on the booted kernel command line`}},
		{"kernel arguments unknown are not checked", mcfgv1.MachineConfigSpec{KernelArguments: []string{"x"}}, Booted{}, nil},
		{"image booted", mcfgv1.MachineConfigSpec{OSImageURL: "quay.io/os@sha256:1"}, Booted{Image: "quay.io/os@sha256:1"}, nil},
		{"image differs", mcfgv1.MachineConfigSpec{OSImageURL: "quay.io/os@sha256:2"}, Booted{Image: "quay.io/os@sha256:1"},
			[]string{`osImageURL: booted "quay.io/os@sha256:1", config wants "quay.io/os@sha256:2"`}},
		{"image on a host without images", mcfgv1.MachineConfigSpec{OSImageURL: "quay.io/os@sha256:2"}, Booted{KernelArgs: cmdline},
			[]string{`osImageURL: booted none this host's OS backend can tell, config wants "quay.io/os@sha256:2"`}},
		{"kernel type differs", mcfgv1.MachineConfigSpec{KernelType: "realtime"}, Booted{KernelType: "default"},
			[]string{`kernelType: booted "default", config wants "realtime"`}},
		{"kernel type empty is default", mcfgv1.MachineConfigSpec{}, Booted{KernelType: "default"}, nil},
		{"default kernel where unknown", mcfgv1.MachineConfigSpec{KernelType: "default"}, Booted{}, nil},
		{"realtime where unknown", mcfgv1.MachineConfigSpec{KernelType: "realtime"}, Booted{},
			[]string{`kernelType: booted none this host's OS backend can tell, config wants "realtime"`}},
		{"extensions booted", mcfgv1.MachineConfigSpec{Extensions: []string{"usbguard"}}, Booted{Extensions: []string{"sysstat", "usbguard"}}, nil},
		{"extension missing", mcfgv1.MachineConfigSpec{Extensions: []string{"usbguard"}}, Booted{Extensions: []string{}},
			[]string{`extensions: "usbguard" is not booted (booted: none)`}},
		{"extensions on a host without", mcfgv1.MachineConfigSpec{Extensions: []string{"usbguard"}}, Booted{},
			[]string{`extensions: "usbguard" is not booted: this host's OS backend has no extensions`}},
		{"fips off", mcfgv1.MachineConfigSpec{FIPS: true}, Booted{},
			[]string{`fips: the config wants FIPS mode, the booted kernel is not in FIPS mode`}},
		{"fips on", mcfgv1.MachineConfigSpec{FIPS: true}, Booted{FIPS: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, m := range Verify(tc.spec, tc.b) {
				got = append(got, m.String())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestNeeded(t *testing.T) {
	cmdline := ParseCmdline("root=/dev/vda1 audit=1")
	for _, tc := range []struct {
		name string
		spec mcfgv1.MachineConfigSpec
		b    Booted
		want Change
	}{
		{"in effect", mcfgv1.MachineConfigSpec{KernelArguments: []string{"audit=1"}, OSImageURL: "img"},
			Booted{KernelArgs: cmdline, Image: "img", KernelType: "default"}, Change{KernelType: "default"}},
		{"missing kernel argument stages the whole set", mcfgv1.MachineConfigSpec{KernelArguments: []string{"audit=1 nosmt"}},
			Booted{KernelArgs: cmdline},
			Change{KernelArgs: true, OldKernelArgs: []string{"audit=1", "nosmt"}, NewKernelArgs: []string{"audit=1", "nosmt"}, KernelType: "default"}},
		{"unknown command line stages nothing", mcfgv1.MachineConfigSpec{KernelArguments: []string{"nosmt"}}, Booted{}, Change{KernelType: "default"}},
		{"image", mcfgv1.MachineConfigSpec{OSImageURL: "img2"}, Booted{Image: "img"}, Change{OSImageURL: "img2", KernelType: "default"}},
		{"kernel type", mcfgv1.MachineConfigSpec{KernelType: "realtime"}, Booted{KernelType: "default"},
			Change{KernelType: "realtime", KernelTypeChanged: true}},
		{"kernel type back", mcfgv1.MachineConfigSpec{}, Booted{KernelType: "realtime"},
			Change{KernelType: "default", KernelTypeChanged: true}},
		{"non-default kernel type where unknown", mcfgv1.MachineConfigSpec{KernelType: "realtime"}, Booted{},
			Change{KernelType: "realtime", KernelTypeChanged: true}},
		{"extension missing", mcfgv1.MachineConfigSpec{Extensions: []string{"usbguard", "sysstat"}}, Booted{Extensions: []string{"sysstat"}},
			Change{ExtensionsChanged: true, NewExtensions: []string{"usbguard", "sysstat"}, KernelType: "default"}},
		{"extensions booted", mcfgv1.MachineConfigSpec{Extensions: []string{"sysstat"}}, Booted{Extensions: []string{"sysstat"}},
			Change{KernelType: "default"}},
		{"extensions where the backend has none", mcfgv1.MachineConfigSpec{Extensions: []string{"sysstat"}}, Booted{},
			Change{ExtensionsChanged: true, NewExtensions: []string{"sysstat"}, KernelType: "default"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Needed(tc.spec, tc.b)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			// Needed stages exactly what Verify reports (FIPS aside, which nothing stages).
			if got.Empty() != (len(Verify(tc.spec, tc.b)) == 0) {
				t.Errorf("Needed empty = %v but Verify = %v", got.Empty(), Verify(tc.spec, tc.b))
			}
		})
	}
}

func TestDevImageDirName(t *testing.T) {
	for ref, want := range map[string]string{
		"quay.io/example/os:4.17":                "quay.io_2fexample_2fos_3a4.17",
		"localhost/mco-dev-os@sha256:0123abcd":   "localhost_2fmco-dev-os_40sha256_3a0123abcd",
		"a_b":                                    "a_5fb",
		"":                                       "_",
		".":                                      "_2e",
		"..":                                     "_2e_2e",
		"...":                                    "...",
		strings.Repeat("x", 10):                  "xxxxxxxxxx",
		"registry.example.com:5000/os:latest-rc": "registry.example.com_3a5000_2fos_3alatest-rc",
	} {
		if got := DevImageDirName(ref); got != want {
			t.Errorf("DevImageDirName(%q) = %q, want %q", ref, got, want)
		}
	}
	// "a/" and "a_2f" must not collide: '_' is escaped too.
	if DevImageDirName("a/") == DevImageDirName("a_2f") {
		t.Error("escaped names collide")
	}
	long := DevImageDirName(strings.Repeat("y/", 300))
	if len(long) > 255 || strings.ContainsAny(long, "/\x00") {
		t.Errorf("long name %q (%d bytes)", long, len(long))
	}
	if long == DevImageDirName(strings.Repeat("y/", 301)) {
		t.Error("long names collide")
	}
}
