package daemon

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/reboot"
	"github.com/mco-dev/mco/internal/protocol"
)

// bootBackend is a boot loader that boots whatever was staged: what firmware does below the OS.
type bootBackend struct {
	supports map[string]bool
	booted   osimage.Booted
	staged   []osimage.Change
	// ignoreStaging: the next boot does not take what was staged (a broken boot loader).
	ignoreStaging bool
}

func (b *bootBackend) Name() string                                   { return "test" }
func (b *bootBackend) Supports(f string) bool                         { return b.supports[f] }
func (b *bootBackend) Discard(context.Context) error                  { return nil }
func (b *bootBackend) Booted(context.Context) (osimage.Booted, error) { return b.booted, nil }
func (b *bootBackend) Stage(_ context.Context, c osimage.Change) error {
	b.staged = append(b.staged, c)
	return nil
}

func (b *bootBackend) reboot() {
	if b.ignoreStaging || len(b.staged) == 0 {
		return
	}
	c := b.staged[len(b.staged)-1]
	if c.OSImageURL != "" {
		b.booted.Image = c.OSImageURL
	}
	if c.KernelArgs {
		for _, a := range c.NewKernelArgs {
			if !strings.Contains(" "+strings.Join(b.booted.KernelArgs, " ")+" ", " "+a+" ") {
				b.booted.KernelArgs = append(b.booted.KernelArgs, a)
			}
		}
	}
}

func TestFirstBoot(t *testing.T) {
	kargs := mcfgv1.MachineConfigSpec{KernelArguments: []string{"audit=1"}}
	for _, tc := range []struct {
		name          string
		spec          mcfgv1.MachineConfigSpec
		supports      []string
		ignoreStaging bool
		// want is the result of each boot until the service stops asking for reboots.
		want       []FirstBootResult
		wantFailed string
	}{
		{name: "nothing to do", spec: mcfgv1.MachineConfigSpec{}, want: []FirstBootResult{FirstBootDone}},
		{name: "kernel argument: stage, reboot once, verify", spec: kargs, supports: []string{osimage.FieldKernelArguments},
			want: []FirstBootResult{FirstBootRebooting, FirstBootDone}},
		{name: "layered image: pivot before the kubelet", spec: mcfgv1.MachineConfigSpec{OSImageURL: "registry.example/os@sha256:2"},
			supports: []string{osimage.FieldOSImageURL}, want: []FirstBootResult{FirstBootRebooting, FirstBootDone}},
		{name: "unsupported field is refused, naming it", spec: mcfgv1.MachineConfigSpec{KernelType: "realtime"},
			supports: []string{osimage.FieldKernelArguments}, want: []FirstBootResult{FirstBootFailed}, wantFailed: "kernelType"},
		{name: "still not in effect after the reboot: reported, no second reboot", spec: kargs, supports: []string{osimage.FieldKernelArguments},
			ignoreStaging: true, want: []FirstBootResult{FirstBootRebooting, FirstBootFailed}, wantFailed: `"audit=1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			mc := &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: "rendered-worker-1"}, Spec: tc.spec}
			data, _ := json.Marshal(mc)
			if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, protocol.EncapsulatedConfigPath), data, 0o644); err != nil {
				t.Fatal(err)
			}
			b := &bootBackend{supports: map[string]bool{}, ignoreStaging: tc.ignoreStaging,
				booted: osimage.Booted{KernelArgs: []string{"rw"}, Image: "registry.example/os@sha256:1"}}
			if tc.spec.OSImageURL == "" {
				b.booted.Image = ""
			}
			for _, f := range tc.supports {
				b.supports[f] = true
			}
			reboots := 0
			opts := FirstBootOptions{Root: root, OS: b, Rebooter: reboot.Func(func(context.Context, string) error { reboots++; return nil })}
			for i, want := range tc.want {
				got, err := FirstBoot(context.Background(), opts)
				if got != want {
					t.Fatalf("boot %d: result %v (err %v), want %v", i+1, got, err, want)
				}
				if got == FirstBootRebooting {
					b.reboot()
				}
			}
			if reboots != len(tc.want)-1 {
				t.Errorf("%d reboots, want %d", reboots, len(tc.want)-1)
			}
			if got, _ := FirstBoot(context.Background(), opts); got != FirstBootNothing {
				t.Errorf("a later boot ran the first-boot service again: %v", got)
			}
			failed, _ := os.ReadFile(filepath.Join(root, FirstBootFailedPath))
			if tc.wantFailed == "" && len(failed) > 0 {
				t.Fatalf("unexpected failure record: %s", failed)
			}
			if tc.wantFailed != "" {
				if !strings.HasPrefix(string(failed), "rendered-worker-1\n") || !strings.Contains(string(failed), tc.wantFailed) {
					t.Fatalf("failure record %q should name the config and %s", failed, tc.wantFailed)
				}
			}
		})
	}
}

// TestLinkPullSecret: the first boot links the pull secret where rpm-ostree and bootc read it,
// keeps a link or file already there, and never writes through a symlink out of the root.
func TestLinkPullSecret(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, root, outside string)
		want    string // the link's target, "" for no link
	}{
		{"linked", func(t *testing.T, root, outside string) {}, protocol.PullSecretPath},
		{"an existing file is kept", func(t *testing.T, root, outside string) {
			mustWrite(t, filepath.Join(root, "run/ostree/auth.json"), "mine")
		}, ""},
		{"/run leading out of the root", func(t *testing.T, root, outside string) {
			if err := os.Symlink(outside, filepath.Join(root, "run")); err != nil {
				t.Fatal(err)
			}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			mustWrite(t, filepath.Join(root, protocol.PullSecretPath), "{}")
			tc.prepare(t, root, outside)
			r, err := noderoot.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			linkPullSecret(r)
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("wrote out of the root: %v", entries)
			}
			target, _ := os.Readlink(filepath.Join(root, "run/ostree/auth.json"))
			if target != tc.want {
				t.Errorf("link target %q, want %q", target, tc.want)
			}
		})
	}
}

func mustWrite(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
