package osimage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// recorder is a systemd.Runner that records every command and answers from outputs (keyed by
// the command line joined with spaces).
type recorder struct {
	calls   [][]string
	outputs map[string]string
	fail    map[string]bool
}

func (r *recorder) run(_ context.Context, name string, args ...string) ([]byte, error) {
	call := append([]string{name}, args...)
	r.calls = append(r.calls, call)
	line := strings.Join(call, " ")
	if r.fail[line] {
		return []byte("it broke"), errors.New("exit status 1")
	}
	return []byte(r.outputs[line]), nil
}

func checkCalls(t *testing.T, r *recorder, want ...[]string) {
	t.Helper()
	if len(want) == 0 {
		want = nil
	}
	if !reflect.DeepEqual(r.calls, want) {
		var got, exp []string
		for _, c := range r.calls {
			got = append(got, strings.Join(quoteAll(c), " "))
		}
		for _, c := range want {
			exp = append(exp, strings.Join(quoteAll(c), " "))
		}
		t.Errorf("commands:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(exp, "\n  "))
	}
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \"") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}

func cmd(s string) []string { return strings.Fields(s) }

const rpmOSTreeDefault = `{"deployments": [
 {"booted": false, "staged": true, "container-image-reference": "ostree-unverified-registry:quay.io/os@sha256:2", "requested-packages": []},
 {"booted": true, "container-image-reference": "ostree-unverified-registry:quay.io/os@sha256:1",
  "requested-packages": ["usbguard", "sysstat", "htop"], "requested-base-removals": []}]}`

const rpmOSTreeRealtime = `warning: something on stderr
{"deployments": [
 {"booted": true, "container-image-reference": "ostree-remote-registry:fedora:quay.io/os@sha256:1",
  "requested-packages": ["kernel-rt-core", "kernel-rt-modules", "kernel-rt-modules-extra", "krb5-workstation", "libkadm5"],
  "requested-base-removals": ["kernel", "kernel-core", "kernel-modules", "kernel-modules-core", "kernel-modules-extra"]}]}`

func TestRPMOSTreeStage(t *testing.T) {
	removeDefault := "override remove kernel kernel-core kernel-modules kernel-modules-core kernel-modules-extra"
	resetRealtime := "override reset kernel kernel-core kernel-modules kernel-modules-core kernel-modules-extra --uninstall kernel-rt-core --uninstall kernel-rt-modules --uninstall kernel-rt-modules-extra"
	for _, tc := range []struct {
		name   string
		status string
		root   string
		c      Change
		want   []string // rpm-ostree command lines
	}{
		{name: "kernel arguments", status: rpmOSTreeDefault,
			c:    Change{KernelArgs: true, OldKernelArgs: []string{"a=1", "b"}, NewKernelArgs: []string{"a=1", "c=3"}, KernelType: "default"},
			want: []string{"cleanup -p", "kargs --delete-if-present=a=1 --delete-if-present=b --append=a=1 --append=c=3"}},
		{name: "kernel arguments all removed", status: rpmOSTreeDefault,
			c:    Change{KernelArgs: true, OldKernelArgs: []string{"a=1"}},
			want: []string{"cleanup -p", "kargs --delete-if-present=a=1"}},
		{name: "image", status: rpmOSTreeDefault,
			c:    Change{OSImageURL: "quay.io/os@sha256:3", KernelType: "default"},
			want: []string{"cleanup -p", "status --json", "rebase --experimental ostree-unverified-registry:quay.io/os@sha256:3"}},
		{name: "image of a change without a kernel type leaves the kernel alone", status: rpmOSTreeRealtime,
			c:    Change{OSImageURL: "quay.io/os@sha256:3"},
			want: []string{"cleanup -p", "rebase --experimental ostree-unverified-registry:quay.io/os@sha256:3"}},
		{name: "to realtime", status: rpmOSTreeDefault,
			c: Change{KernelType: "realtime", KernelTypeChanged: true},
			want: []string{"cleanup -p", "status --json",
				removeDefault + " --install kernel-rt-core --install kernel-rt-modules --install kernel-rt-modules-extra"}},
		{name: "back to default", status: rpmOSTreeRealtime,
			c:    Change{KernelType: "default", KernelTypeChanged: true},
			want: []string{"cleanup -p", "status --json", resetRealtime}},
		{name: "realtime to 64k-pages", status: rpmOSTreeRealtime,
			c: Change{KernelType: "64k-pages", KernelTypeChanged: true},
			want: []string{"cleanup -p", "status --json", resetRealtime,
				removeDefault + " --install kernel-64k-core --install kernel-64k-modules --install kernel-64k-modules-core --install kernel-64k-modules-extra"}},
		{name: "image change on realtime redoes the switch", status: rpmOSTreeRealtime,
			c: Change{OSImageURL: "quay.io/os@sha256:3", KernelType: "realtime", KernelArgs: true, NewKernelArgs: []string{"nosmt"}},
			want: []string{"cleanup -p", "status --json", resetRealtime,
				"rebase --experimental ostree-unverified-registry:quay.io/os@sha256:3",
				"kargs --append=nosmt",
				removeDefault + " --install kernel-rt-core --install kernel-rt-modules --install kernel-rt-modules-extra"}},
		{name: "extensions", status: rpmOSTreeDefault,
			c: Change{ExtensionsChanged: true, OldExtensions: []string{"usbguard", "sysstat"}, NewExtensions: []string{"usbguard", "kerberos", "kernel-devel"}},
			want: []string{"cleanup -p", "status --json",
				"update --install kernel-devel --install kernel-headers --install krb5-workstation --install libkadm5 --uninstall sysstat"}},
		{name: "extensions all removed", status: rpmOSTreeRealtime,
			c:    Change{ExtensionsChanged: true, OldExtensions: []string{"kerberos"}},
			want: []string{"cleanup -p", "status --json", "update --uninstall krb5-workstation --uninstall libkadm5"}},
		{name: "extensions already there", status: rpmOSTreeDefault,
			c:    Change{ExtensionsChanged: true, NewExtensions: []string{"usbguard", "sysstat"}},
			want: []string{"cleanup -p", "status --json"}},
		{name: "unknown extension runs nothing", status: rpmOSTreeDefault,
			c: Change{ExtensionsChanged: true, NewExtensions: []string{"emacs"}}},
		{name: "chrooted", status: rpmOSTreeDefault, root: "/rootfs",
			c:    Change{OSImageURL: "quay.io/os@sha256:3"},
			want: []string{"cleanup -p", "rebase --experimental ostree-unverified-registry:quay.io/os@sha256:3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tc.root
			if root == "" {
				root = "/"
			}
			prefix := "rpm-ostree "
			if root != "/" {
				prefix = "chroot " + root + " rpm-ostree "
			}
			rec := &recorder{outputs: map[string]string{prefix + "status --json": tc.status}}
			err := NewRPMOSTree(root, rec.run).Stage(context.Background(), tc.c)
			if tc.want == nil {
				if err == nil {
					t.Fatal("staged an unknown extension")
				}
			} else if err != nil {
				t.Fatal(err)
			}
			var want [][]string
			for _, w := range tc.want {
				want = append(want, cmd(prefix+w))
			}
			checkCalls(t, rec, want...)
		})
	}
}

func TestRPMOSTreeStageStopsAtTheFirstFailure(t *testing.T) {
	rec := &recorder{fail: map[string]bool{"rpm-ostree rebase --experimental ostree-unverified-registry:bad": true}}
	err := NewRPMOSTree("/", rec.run).Stage(context.Background(), Change{OSImageURL: "bad", KernelArgs: true, NewKernelArgs: []string{"a"}})
	if err == nil || !strings.Contains(err.Error(), "rpm-ostree rebase --experimental ostree-unverified-registry:bad: exit status 1: it broke") {
		t.Fatalf("error %v does not name the command and its output", err)
	}
	checkCalls(t, rec, cmd("rpm-ostree cleanup -p"), cmd("rpm-ostree rebase --experimental ostree-unverified-registry:bad"))
}

func TestRPMOSTreeDiscard(t *testing.T) {
	rec := &recorder{}
	if err := NewRPMOSTree("/host", rec.run).Discard(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, rec, cmd("chroot /host rpm-ostree cleanup -p"))
}

func writeKernelFiles(t *testing.T, cmdline string) Kernel {
	t.Helper()
	dir := t.TempDir()
	k := Kernel{CmdlinePath: filepath.Join(dir, "cmdline"), FIPSPath: filepath.Join(dir, "fips_enabled"), ReleasePath: filepath.Join(dir, "osrelease")}
	for p, data := range map[string]string{k.CmdlinePath: cmdline + "\n", k.FIPSPath: "0\n", k.ReleasePath: "6.1.0-test\n"} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

func TestRPMOSTreeBooted(t *testing.T) {
	for _, tc := range []struct {
		status string
		want   Booted
	}{
		{rpmOSTreeDefault, Booted{KernelArgs: []string{"root=/dev/vda4", "audit=1"}, Image: "quay.io/os@sha256:1", KernelType: "default",
			Extensions: []string{"sysstat", "usbguard"}}},
		{rpmOSTreeRealtime, Booted{KernelArgs: []string{"root=/dev/vda4", "audit=1"}, Image: "quay.io/os@sha256:1", KernelType: "realtime",
			Extensions: []string{"kerberos"}}},
	} {
		rec := &recorder{outputs: map[string]string{"rpm-ostree status --json": tc.status}}
		b := NewRPMOSTree("/", rec.run)
		b.Kernel = writeKernelFiles(t, "root=/dev/vda4 audit=1")
		got, err := b.Booted(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("got  %+v\nwant %+v", got, tc.want)
		}
		checkCalls(t, rec, cmd("rpm-ostree status --json"))
	}
}

func TestImageOfOSTreeRef(t *testing.T) {
	for ref, want := range map[string]string{
		"ostree-unverified-registry:quay.io/os@sha256:1":                    "quay.io/os@sha256:1",
		"ostree-remote-registry:fedora:quay.io/fedora/coreos:stable":        "quay.io/fedora/coreos:stable",
		"ostree-unverified-image:containers-storage:quay.io/os@sha256:1":    "quay.io/os@sha256:1",
		"ostree-image-signed:docker://quay.io/os:4.17":                      "quay.io/os:4.17",
		"ostree-remote-image:rhcos:registry:quay.io/openshift/os@sha256:ff": "quay.io/openshift/os@sha256:ff",
	} {
		if got, err := imageOfOSTreeRef(ref); err != nil || got != want {
			t.Errorf("imageOfOSTreeRef(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
	for _, bad := range []string{"quay.io/os:1", "ostree-unverified-image:noTransport", "docker://quay.io/os"} {
		if got, err := imageOfOSTreeRef(bad); err == nil {
			t.Errorf("imageOfOSTreeRef(%q) = %q, want an error", bad, got)
		}
	}
}

const bootcNothingStaged = `{"apiVersion":"org.containers.bootc/v1","kind":"BootcHost",
 "spec":{"image":{"image":"quay.io/os:1","transport":"registry"}},
 "status":{"staged":null,"booted":{"image":{"image":{"image":"quay.io/os:1","transport":"registry"},"imageDigest":"sha256:1"},"pinned":false},"rollback":null}}`

const bootcStaged = `{"apiVersion":"org.containers.bootc/v1","kind":"BootcHost",
 "status":{"staged":{"image":{"image":{"image":"quay.io/os:2","transport":"registry"}}},
 "booted":{"image":{"image":{"image":"quay.io/os:1","transport":"registry"}}}}}`

func TestBootcStage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status string
		c      Change
		want   [][]string
	}{
		{"image and kernel arguments", bootcNothingStaged,
			Change{OSImageURL: "quay.io/os:2", KernelArgs: true, OldKernelArgs: []string{"a=0"}, NewKernelArgs: []string{"a=1", `b="x y"`}},
			[][]string{cmd("bootc status --json"), cmd("bootc switch quay.io/os:2"),
				{"bootc", "loader-entries", "set-options-for-source", "--source", "mco", "--options", `a=1 b="x y"`}}},
		{"kernel arguments all removed", bootcNothingStaged,
			Change{KernelArgs: true, OldKernelArgs: []string{"a=1"}},
			[][]string{cmd("bootc status --json"), cmd("bootc loader-entries set-options-for-source --source mco")}},
		{"an earlier staging is discarded first", bootcStaged,
			Change{OSImageURL: "quay.io/os:3"},
			[][]string{cmd("bootc status --json"), cmd("ostree admin undeploy 0"), cmd("bootc switch quay.io/os:3")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{outputs: map[string]string{"bootc status --json": tc.status}}
			if err := NewBootc("/", rec.run).Stage(context.Background(), tc.c); err != nil {
				t.Fatal(err)
			}
			checkCalls(t, rec, tc.want...)
		})
	}
	rec := &recorder{}
	if err := NewBootc("/", rec.run).Stage(context.Background(), Change{KernelType: "realtime", KernelTypeChanged: true}); err == nil {
		t.Error("bootc staged a kernel type")
	}
	checkCalls(t, rec)
}

func TestBootcDiscard(t *testing.T) {
	for status, want := range map[string][][]string{
		bootcStaged:        {cmd("chroot /rootfs bootc status --json"), cmd("chroot /rootfs ostree admin undeploy 0")},
		bootcNothingStaged: {cmd("chroot /rootfs bootc status --json")},
	} {
		rec := &recorder{outputs: map[string]string{"chroot /rootfs bootc status --json": status}}
		if err := NewBootc("/rootfs", rec.run).Discard(context.Background()); err != nil {
			t.Fatal(err)
		}
		checkCalls(t, rec, want...)
	}
}

func TestBootcBooted(t *testing.T) {
	rec := &recorder{outputs: map[string]string{"bootc status --json": bootcStaged}}
	b := NewBootc("/", rec.run)
	b.Kernel = writeKernelFiles(t, "root=/dev/vda4 ostree=/ostree/boot.1/default/0 audit=1")
	got, err := b.Booted(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := Booted{KernelArgs: []string{"root=/dev/vda4", "ostree=/ostree/boot.1/default/0", "audit=1"}, Image: "quay.io/os:1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if !b.Supports(FieldOSImageURL) || !b.Supports(FieldKernelArguments) || b.Supports(FieldKernelType) || b.Supports(FieldExtensions) || b.Supports(FieldFIPS) {
		t.Error("bootc supports osImageURL and kernelArguments only")
	}
}

// packageRoot is a node root for the package backend.
func packageRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"etc", "run", "boot"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, data := range files {
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func readOrAbsent(t *testing.T, root, p string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, p))
	if os.IsNotExist(err) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func newTestPackage(t *testing.T, root string, flavor PackageFlavor, rec *recorder, cmdline string) *Package {
	p := NewPackage(root, flavor, rec.run)
	p.Kernel = writeKernelFiles(t, cmdline)
	return p
}

func TestKernelInstallSeedsFromTheBootedCommandLine(t *testing.T) {
	ctx := context.Background()
	root := packageRoot(t, nil)
	rec := &recorder{}
	p := newTestPackage(t, root, KernelInstall, rec, "BOOT_IMAGE=/vmlinuz-6.1.0 root=UUID=abc ro initrd=/initrd.img quiet")
	if err := p.Stage(ctx, Change{KernelArgs: true, NewKernelArgs: []string{"audit=1", `foo="a b"`}}); err != nil {
		t.Fatal(err)
	}
	if got, want := readOrAbsent(t, root, KernelCmdlinePath), "root=UUID=abc ro quiet audit=1 foo=\"a b\"\n"; got != want {
		t.Errorf("/etc/kernel/cmdline = %q, want %q", got, want)
	}
	checkCalls(t, rec) // no /boot/loader/entries: the boot loader reads /etc/kernel/cmdline itself
	if p.Name() != "package (kernel-install)" || !p.Supports(FieldKernelArguments) || p.Supports(FieldOSImageURL) {
		t.Errorf("%s supports the wrong fields", p.Name())
	}
	// Discard puts back what was there: nothing.
	if err := p.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	if got := readOrAbsent(t, root, KernelCmdlinePath); got != "<absent>" {
		t.Errorf("after Discard /etc/kernel/cmdline = %q", got)
	}
	if got := readOrAbsent(t, root, PackageStagedPath); got != "<absent>" {
		t.Errorf("record left behind: %q", got)
	}
}

func TestKernelInstallStageAndDiscardAcrossRestart(t *testing.T) {
	ctx := context.Background()
	const before = "root=UUID=abc ro audit=1 quiet audit=1\n"
	root := packageRoot(t, map[string]string{
		KernelCmdlinePath:          before,
		"/boot/loader/entries/":    "",
		"/boot/vmlinuz-6.1.0-test": "kernel",
	})
	rec := &recorder{}
	p := newTestPackage(t, root, KernelInstall, rec, "root=UUID=abc ro audit=1 quiet")
	if err := p.Stage(ctx, Change{KernelArgs: true, OldKernelArgs: []string{"audit=1"}, NewKernelArgs: []string{"audit=0", "nosmt"}}); err != nil {
		t.Fatal(err)
	}
	if got, want := readOrAbsent(t, root, KernelCmdlinePath), "root=UUID=abc ro quiet audit=0 nosmt\n"; got != want {
		t.Errorf("/etc/kernel/cmdline = %q, want %q", got, want)
	}
	install := []string{"chroot", root, "kernel-install", "add", "6.1.0-test", "/boot/vmlinuz-6.1.0-test"}
	checkCalls(t, rec, install)

	// A new agent (nothing in memory) can still discard: the record is in /run.
	rec2 := &recorder{}
	p2 := newTestPackage(t, root, KernelInstall, rec2, "root=UUID=abc ro audit=1 quiet")
	if err := p2.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	if got := readOrAbsent(t, root, KernelCmdlinePath); got != before {
		t.Errorf("after Discard /etc/kernel/cmdline = %q, want %q", got, before)
	}
	checkCalls(t, rec2, install)
	// Nothing staged any more: a second Discard does nothing.
	if err := p.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p2.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, rec2, install)
	if got := readOrAbsent(t, root, KernelCmdlinePath); got != before {
		t.Errorf("after a second Discard /etc/kernel/cmdline = %q", got)
	}
}

func TestKernelInstallSkipsAMissingKernelImage(t *testing.T) {
	root := packageRoot(t, map[string]string{KernelCmdlinePath: "ro\n", "/boot/loader/entries/": ""})
	rec := &recorder{}
	p := newTestPackage(t, root, KernelInstall, rec, "ro")
	if err := p.Stage(context.Background(), Change{KernelArgs: true, NewKernelArgs: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, rec)
}

func TestGrubDropIn(t *testing.T) {
	ctx := context.Background()
	root := packageRoot(t, map[string]string{grubDefaultsPath: "GRUB_CMDLINE_LINUX=\"quiet\"\n"})
	rec := &recorder{}
	p := newTestPackage(t, root, Grub, rec, "BOOT_IMAGE=/vmlinuz quiet")
	if err := p.Stage(ctx, Change{KernelArgs: true, NewKernelArgs: []string{"audit=1", `foo="a $b"`}}); err != nil {
		t.Fatal(err)
	}
	first := "# Written by mco: the kernel arguments of this node's MachineConfig.\n" +
		`# mco-kernel-args: ["audit=1","foo=\"a $b\""]` + "\n" +
		`GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX audit=1 foo=\"a \$b\""` + "\n"
	if got := readOrAbsent(t, root, GrubDropInPath); got != first {
		t.Errorf("drop-in:\n%s\nwant:\n%s", got, first)
	}
	updateGrub := []string{"chroot", root, "update-grub"}
	checkCalls(t, rec, updateGrub)

	// The next config changes one argument: the drop-in is rewritten from its own list.
	if err := p.Stage(ctx, Change{KernelArgs: true, OldKernelArgs: []string{"audit=1", `foo="a $b"`}, NewKernelArgs: []string{"audit=0"}}); err != nil {
		t.Fatal(err)
	}
	second := readOrAbsent(t, root, GrubDropInPath)
	if !strings.Contains(second, `GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX audit=0"`) {
		t.Errorf("second drop-in:\n%s", second)
	}
	// Removing every argument removes the drop-in; Discard brings back the one before.
	if err := p.Stage(ctx, Change{KernelArgs: true, OldKernelArgs: []string{"audit=0"}}); err != nil {
		t.Fatal(err)
	}
	if got := readOrAbsent(t, root, GrubDropInPath); got != "<absent>" {
		t.Errorf("drop-in without arguments: %q", got)
	}
	if err := p.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	if got := readOrAbsent(t, root, GrubDropInPath); got != second {
		t.Errorf("after Discard:\n%s\nwant:\n%s", got, second)
	}
	checkCalls(t, rec, updateGrub, updateGrub, updateGrub, updateGrub)
	if got := readOrAbsent(t, root, grubDefaultsPath); got != "GRUB_CMDLINE_LINUX=\"quiet\"\n" {
		t.Errorf("/etc/default/grub changed: %q", got)
	}
}

func TestGrubRefusesAForeignDropIn(t *testing.T) {
	root := packageRoot(t, map[string]string{grubDefaultsPath: "", GrubDropInPath: "GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX x\"\n"})
	rec := &recorder{}
	p := newTestPackage(t, root, Grub, rec, "quiet")
	if err := p.Stage(context.Background(), Change{KernelArgs: true, NewKernelArgs: []string{"a"}}); err == nil || !strings.Contains(err.Error(), "not written by mco") {
		t.Fatalf("Stage over a foreign drop-in: %v", err)
	}
	checkCalls(t, rec)
}

func TestPackageStagesOnlyKernelArguments(t *testing.T) {
	root := packageRoot(t, nil)
	rec := &recorder{}
	p := newTestPackage(t, root, KernelInstall, rec, "quiet")
	for _, c := range []Change{{OSImageURL: "x"}, {KernelType: "realtime", KernelTypeChanged: true}, {ExtensionsChanged: true, NewExtensions: []string{"usbguard"}}} {
		if err := p.Stage(context.Background(), c); err == nil {
			t.Errorf("staged %+v", c)
		}
	}
	if got := readOrAbsent(t, root, KernelCmdlinePath); got != "<absent>" {
		t.Errorf("wrote %q", got)
	}
	b, err := p.Booted(context.Background())
	if err != nil || !reflect.DeepEqual(b, Booted{KernelArgs: []string{"quiet"}}) {
		t.Errorf("Booted = %+v, %v", b, err)
	}
}

func TestDevImage(t *testing.T) {
	ctx := context.Background()
	const ref = "localhost/mco-dev-os:2"
	root := packageRoot(t, map[string]string{
		DevBootedImagePath: "localhost/mco-dev-os:1\n",
		DevRegistryPath + "/" + DevImageDirName(ref) + "/": "",
	})
	rec := &recorder{}
	d := NewDevImage(root, rec.run)
	d.Kargs.Kernel = writeKernelFiles(t, "console=ttyS0 audit=1")
	if d.Name() != "package (kernel-install) + dev image" {
		t.Errorf("name %q", d.Name())
	}
	for field, want := range map[string]bool{FieldOSImageURL: true, FieldKernelArguments: true, FieldKernelType: false, FieldExtensions: false, FieldFIPS: false} {
		if d.Supports(field) != want {
			t.Errorf("Supports(%s) = %v", field, !want)
		}
	}
	err := d.Stage(ctx, Change{OSImageURL: "localhost/mco-dev-os:9"})
	if err == nil || !strings.Contains(err.Error(), `image "localhost/mco-dev-os:9" not found in the dev registry`) {
		t.Fatalf("staging a missing image: %v", err)
	}
	if err := d.Stage(ctx, Change{OSImageURL: ref, KernelArgs: true, NewKernelArgs: []string{"nosmt"}}); err != nil {
		t.Fatal(err)
	}
	if got := readOrAbsent(t, root, DevStagedImagePath); got != ref+"\n" {
		t.Errorf("staged image %q", got)
	}
	if got := readOrAbsent(t, root, KernelCmdlinePath); got != "console=ttyS0 audit=1 nosmt\n" {
		t.Errorf("/etc/kernel/cmdline %q", got)
	}
	b, err := d.Booted(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Booted{KernelArgs: []string{"console=ttyS0", "audit=1"}, Image: "localhost/mco-dev-os:1"}); !reflect.DeepEqual(b, want) {
		t.Errorf("Booted = %+v, want %+v", b, want)
	}
	if err := d.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	if got := readOrAbsent(t, root, DevStagedImagePath); got != "<absent>" {
		t.Errorf("staged image after Discard: %q", got)
	}
	if got := readOrAbsent(t, root, KernelCmdlinePath); got != "<absent>" {
		t.Errorf("/etc/kernel/cmdline after Discard: %q", got)
	}
	checkCalls(t, rec)
	if err := d.Stage(ctx, Change{KernelType: "realtime", KernelTypeChanged: true}); err == nil {
		t.Error("the dev backend staged a kernel type")
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		files []string
		want  string
		grub  []string
	}{
		{[]string{"/run/ostree-booted", "/usr/bin/rpm-ostree", "/usr/bin/bootc"}, "rpm-ostree", nil},
		{[]string{"/run/ostree-booted", "/usr/bin/bootc"}, "bootc", nil},
		{[]string{"/usr/bin/rpm-ostree", "/etc/default/grub", "/usr/sbin/update-grub"}, "package (grub)", []string{"update-grub"}},
		{[]string{DevBootedImagePath, "/etc/default/grub"}, "package (kernel-install) + dev image", nil},
		{[]string{"/etc/kernel/cmdline", "/etc/default/grub"}, "package (kernel-install)", nil},
		{[]string{"/etc/default/grub", "/usr/bin/kernel-install", "/boot/loader/entries"}, "package (kernel-install)", nil},
		{[]string{"/etc/default/grub", "/usr/bin/kernel-install"}, "package (grub)", []string{"grub2-mkconfig", "-o", "/boot/grub2/grub.cfg"}},
		{[]string{"/usr/bin/kernel-install"}, "package (kernel-install)", nil},
		{[]string{"/usr/bin/bootc"}, "none", nil},
		{nil, "none", nil},
	} {
		have := map[string]bool{}
		for _, f := range tc.files {
			have[f] = true
		}
		b := Detect("/", func(p string) bool { return have[p] }, (&recorder{}).run)
		if b.Name() != tc.want {
			t.Errorf("Detect(%v) = %s, want %s", tc.files, b.Name(), tc.want)
		}
		if tc.grub != nil && !reflect.DeepEqual(b.(*Package).GrubCommand, tc.grub) {
			t.Errorf("Detect(%v): GRUB command %v, want %v", tc.files, b.(*Package).GrubCommand, tc.grub)
		}
	}
}

func TestNoneBootedReportsTheKernel(t *testing.T) {
	n := None{Kernel: writeKernelFiles(t, "ro quiet")}
	b, err := n.Booted(context.Background())
	if err != nil || !reflect.DeepEqual(b, Booted{KernelArgs: []string{"ro", "quiet"}}) {
		t.Errorf("Booted = %+v, %v", b, err)
	}
	if err := n.Stage(context.Background(), Change{KernelType: "default"}); err != nil {
		t.Errorf("staging nothing: %v", err)
	}
	if err := n.Stage(context.Background(), Change{KernelArgs: true}); err == nil {
		t.Error("None staged kernel arguments")
	}
}

// The dev backend reads the command line the machine's firmware presented over the machine's
// own /proc/cmdline, under the root: an agent in a pod (root /rootfs) has a /proc of its own,
// showing the host kernel's.
func TestDevImageReadsTheMachinesCmdline(t *testing.T) {
	root := packageRoot(t, map[string]string{
		DevBootedImagePath: "localhost/mco-dev-os:1\n",
		ProcCmdline:        "BOOT_IMAGE=(mco-dev)/vmlinuz rw mco.presented=1\n",
	})
	b, err := NewDevImage(root, (&recorder{}).run).Booted(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(b.KernelArgs, "mco.presented=1") {
		t.Errorf("Booted = %+v: not the machine's presented command line", b)
	}
}
