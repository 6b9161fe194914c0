package machine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileSetValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  FileSet
		want string // "" = valid
	}{
		{"absolute and clean", FileSet{Dirs: []Dir{{Path: "/etc/kubernetes/kubelet.conf.d", Mode: 0o755}}, Files: []File{{Path: "/etc/default/kubelet", Mode: 0o644}}}, ""},
		{"relative file", FileSet{Files: []File{{Path: "etc/default/kubelet", Mode: 0o644}}}, `files[0]: path "etc/default/kubelet" must be absolute`},
		{"dot-dot", FileSet{Files: []File{{Path: "/etc/../../host", Mode: 0o644}}}, `files[0]: path "/etc/../../host"`},
		{"root dir", FileSet{Dirs: []Dir{{Path: "/", Mode: 0o755}}}, `dirs[0]: path "/"`},
		{"setuid", FileSet{Files: []File{{Path: "/usr/bin/x", Mode: os.ModeSetuid | 0o755}}}, "files[0] (/usr/bin/x): mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.set.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

// The file set lands in the root as the machine resolves paths: an absolute symlink of the
// image leads inside the root, never to this host's directory of that name.
func TestFileSetWritesInsideTheRoot(t *testing.T) {
	root, host := t.TempDir(), t.TempDir()
	// /etc/kubernetes → host (an absolute path): inside the machine that is <root><host>; a
	// write following it on this host would land in host itself.
	inside := filepath.Join(root, host)
	if err := os.MkdirAll(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, filepath.Join(root, "etc", "kubernetes")); err != nil {
		t.Fatal(err)
	}
	set := FileSet{
		Dirs:  []Dir{{Path: "/etc/kubernetes/kubelet.conf.d", Mode: 0o755}},
		Files: []File{{Path: "/var/lib/kubelet/config.yaml", Mode: 0o644, Content: "kind: KubeletConfiguration\n"}, {Path: "/etc/kubernetes/pki/ca.crt", Mode: 0o600, Content: "ca"}},
	}
	if err := set.writeTo(root); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(filepath.Join(inside, "kubelet.conf.d")); err != nil || !info.IsDir() {
		t.Errorf("empty directory: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(root, "var/lib/kubelet/config.yaml")); err != nil || string(data) != "kind: KubeletConfiguration\n" {
		t.Errorf("config.yaml = %q, %v", data, err)
	}
	if info, err := os.Stat(filepath.Join(inside, "pki", "ca.crt")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("ca.crt: %v %v", info, err)
	}
	if entries, _ := os.ReadDir(host); len(entries) != 0 {
		t.Errorf("wrote outside the root: %v", entries)
	}
}

func TestProvisionRefusesUnknownKind(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := Config{Name: "m", Dir: t.TempDir(), Provision: "kickstart"}
	if err := c.provision(context.Background(), root); err == nil || !strings.Contains(err.Error(), `machine m: provision "kickstart"`) {
		t.Errorf("provision = %v", err)
	}
}

func TestProvisionFilesWritesTheStoredSet(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := Config{Name: "worker-0", Dir: t.TempDir(), Provision: ProvisionFiles}
	if err := WriteFileSet(c.Dir, FileSet{Files: []File{{Path: "/etc/default/kubelet", Mode: 0o644, Content: "KUBELET_EXTRA_ARGS=\n"}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.provision(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"etc/hostname": "worker-0\n", "etc/default/kubelet": "KUBELET_EXTRA_ARGS=\n"} {
		if data, err := os.ReadFile(filepath.Join(root, path)); err != nil || string(data) != want {
			t.Errorf("%s = %q, %v", path, data, err)
		}
	}
	if err := WriteFileSet(t.TempDir(), FileSet{Files: []File{{Path: "relative", Mode: 0o644}}}); err == nil {
		t.Error("WriteFileSet stored an invalid set")
	}
}
