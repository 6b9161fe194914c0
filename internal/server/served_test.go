package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/vincent-petithory/dataurl"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
)

func testMC(t testing.TB, cfg string) *mcfgv1.MachineConfig {
	t.Helper()
	return &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "rendered-worker-abc", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}},
		Spec: mcfgv1.MachineConfigSpec{
			Config:          runtime.RawExtension{Raw: []byte(cfg)},
			OSImageURL:      "quay.io/os@sha256:1",
			KernelArguments: []string{"audit=1"},
			Extensions:      []string{"usbguard"},
			FIPS:            true,
			KernelType:      "realtime",
		},
	}
}

const (
	oneFile      = `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hi"},"mode":420}]}}`
	withCAFile   = `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/kubernetes/kubelet-ca.crt","contents":{"source":"data:,old"}}]}}`
	withKargs    = `{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldExist":["nosmt","audit=1"]}}`
	withNotKargs = `{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldNotExist":["quiet"]}}`
	withPullSec  = `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/var/lib/kubelet/config.json","mode":384,"contents":{"source":"data:,mine"}}]}}`
	pullSecret   = `{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}`
	spec22Config = `{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/etc/motd","contents":{"source":"data:,hi"},"mode":420}]}}`
)

func TestBuildServedConfig(t *testing.T) {
	tests := []struct {
		name      string
		config    string
		version   string
		kubeletCA string
		kubecfg   string
		pullSec   string
		wantErr   string
		check     func(t *testing.T, cfg ignition.Config, served []byte)
	}{
		{name: "3.4 appends the daemon's files, encapsulated last", config: oneFile, version: "3.4.0", check: func(t *testing.T, cfg ignition.Config, _ []byte) {
			paths := filePaths(cfg)
			want := []string{"/etc/motd", NodeAnnotationsPath, MachineConfigCopyPath, EncapsulatedConfigPath}
			if !slices.Equal(paths, want) {
				t.Fatalf("files = %v, want %v", paths, want)
			}
			for _, f := range cfg.Storage.Files[1:] {
				if *f.Mode != 0o644 || !*f.Overwrite {
					t.Errorf("%s: mode %o overwrite %v, want 0644 true", f.Path, *f.Mode, *f.Overwrite)
				}
			}
			var ann map[string]string
			mustJSON(t, fileBytes(t, cfg, NodeAnnotationsPath), &ann)
			for _, key := range []string{protocol.CurrentConfigAnnotation, protocol.DesiredConfigAnnotation, protocol.FirstPivotConfigAnnotation} {
				if ann[key] != "rendered-worker-abc" {
					t.Errorf("%s = %q", key, ann[key])
				}
			}
			if ann[protocol.StateAnnotation] != "Done" {
				t.Errorf("state = %q", ann[protocol.StateAnnotation])
			}
			var enc mcfgv1.MachineConfig
			mustJSON(t, fileBytes(t, cfg, EncapsulatedConfigPath), &enc)
			if string(enc.Spec.Config.Raw) != `{"ignition":{"version":"3.4.0"}}` || enc.Spec.OSImageURL != "quay.io/os@sha256:1" ||
				!enc.Spec.FIPS || enc.Spec.KernelType != "realtime" || !slices.Equal(enc.Spec.Extensions, []string{"usbguard"}) || enc.Kind != "MachineConfig" {
				t.Errorf("encapsulated MC = %+v", enc)
			}
			copyFile := findFile(cfg, MachineConfigCopyPath)
			if copyFile.Contents.Compression == nil || *copyFile.Contents.Compression != "gzip" {
				t.Fatalf("content copy not gzip-compressed: %+v", copyFile.Contents)
			}
			var full mcfgv1.MachineConfig
			mustJSON(t, fileBytes(t, cfg, MachineConfigCopyPath), &full)
			if full.Name != "rendered-worker-abc" || !strings.Contains(string(full.Spec.Config.Raw), "/etc/motd") || full.ManagedFields != nil {
				t.Errorf("content copy = %+v", full)
			}
		}},
		{name: "kubelet CA and kubeconfig appended when known", config: oneFile, version: "3.5.0", kubeletCA: "CA PEM", kubecfg: "apiVersion: v1\n", check: func(t *testing.T, cfg ignition.Config, _ []byte) {
			want := []string{"/etc/motd", KubeletCAPath, NodeAnnotationsPath, KubeconfigPath, MachineConfigCopyPath, EncapsulatedConfigPath}
			if got := filePaths(cfg); !slices.Equal(got, want) {
				t.Fatalf("files = %v, want %v", got, want)
			}
			if got := string(fileBytes(t, cfg, KubeletCAPath)); got != "CA PEM" {
				t.Errorf("kubelet CA = %q", got)
			}
		}},
		{name: "pull secret appended root-owned 0600 when known", config: oneFile, version: "3.4.0", kubecfg: "apiVersion: v1\n", pullSec: pullSecret, check: func(t *testing.T, cfg ignition.Config, _ []byte) {
			want := []string{"/etc/motd", NodeAnnotationsPath, KubeconfigPath, PullSecretPath, MachineConfigCopyPath, EncapsulatedConfigPath}
			if got := filePaths(cfg); !slices.Equal(got, want) {
				t.Fatalf("files = %v, want %v", got, want)
			}
			checkPullSecretFile(t, cfg, pullSecret)
		}},
		{name: "pull secret in spec 2.2", config: spec22Config, version: "2.2.0", pullSec: pullSecret, check: func(t *testing.T, cfg ignition.Config, _ []byte) {
			checkPullSecretFile(t, cfg, pullSecret)
		}},
		{name: "pull secret in spec 3.1", config: oneFile, version: "3.1.0", pullSec: pullSecret, check: func(t *testing.T, cfg ignition.Config, _ []byte) {
			checkPullSecretFile(t, cfg, pullSecret)
		}},
		{name: "a config's own pull secret is kept", config: withPullSec, version: "3.4.0", pullSec: pullSecret, check: func(t *testing.T, cfg ignition.Config, _ []byte) {
			if n := strings.Count(strings.Join(filePaths(cfg), " "), PullSecretPath); n != 1 {
				t.Fatalf("pull secret appears %d times", n)
			}
			if got := string(fileBytes(t, cfg, PullSecretPath)); got != "mine" {
				t.Errorf("pull secret = %q, want the config's own", got)
			}
		}},
		{name: "kubelet CA replaces an admin's copy", config: withCAFile, version: "3.4.0", kubeletCA: "NEW", check: func(t *testing.T, cfg ignition.Config, _ []byte) {
			if n := strings.Count(strings.Join(filePaths(cfg), " "), KubeletCAPath); n != 1 {
				t.Fatalf("kubelet CA appears %d times", n)
			}
			if got := string(fileBytes(t, cfg, KubeletCAPath)); got != "NEW" {
				t.Errorf("kubelet CA = %q", got)
			}
		}},
		{name: "2.2 serves plain content copy on the root filesystem", config: spec22Config, version: "2.2.0", check: func(t *testing.T, cfg ignition.Config, served []byte) {
			if !strings.Contains(string(served), `"version":"2.2.0"`) || !strings.Contains(string(served), `"filesystem":"root"`) {
				t.Fatalf("not a spec 2.2 document: %.300s", served)
			}
			if c := findFile(cfg, MachineConfigCopyPath).Contents.Compression; c != nil && *c != "" {
				t.Errorf("2.2 content copy compressed with %q", *c)
			}
			var enc mcfgv1.MachineConfig
			mustJSON(t, fileBytes(t, cfg, EncapsulatedConfigPath), &enc)
			if string(enc.Spec.Config.Raw) != `{"ignition":{"version":"2.2.0"}}` {
				t.Errorf("encapsulated config = %s", enc.Spec.Config.Raw)
			}
		}},
		{name: "shouldExist kernel arguments move to the MC below 3.3", config: withKargs, version: "3.2.0", check: func(t *testing.T, cfg ignition.Config, _ []byte) {
			var enc mcfgv1.MachineConfig
			mustJSON(t, fileBytes(t, cfg, EncapsulatedConfigPath), &enc)
			if want := []string{"audit=1", "nosmt"}; !slices.Equal(enc.Spec.KernelArguments, want) {
				t.Errorf("kernelArguments = %v, want %v", enc.Spec.KernelArguments, want)
			}
			if len(cfg.KernelArguments.ShouldExist) != 0 {
				t.Errorf("3.2 config still has kernelArguments: %v", cfg.KernelArguments)
			}
		}},
		{name: "shouldExist kernel arguments stay in Ignition from 3.3", config: withKargs, version: "3.3.0", check: func(t *testing.T, cfg ignition.Config, _ []byte) {
			var enc mcfgv1.MachineConfig
			mustJSON(t, fileBytes(t, cfg, EncapsulatedConfigPath), &enc)
			if !slices.Equal(enc.Spec.KernelArguments, []string{"audit=1"}) || len(cfg.KernelArguments.ShouldExist) != 2 {
				t.Errorf("MC kargs %v, Ignition kargs %v", enc.Spec.KernelArguments, cfg.KernelArguments)
			}
		}},
		{name: "shouldNotExist cannot be served below 3.3", config: withNotKargs, version: "3.1.0", wantErr: "shouldNotExist"},
		{name: "shouldNotExist served at 3.4", config: withNotKargs, version: "3.4.0"},
		{name: "3.0 has no conversion path", config: oneFile, version: "3.0.0", wantErr: "not supported"},
		{name: "invalid config", config: `{"ignition":{"version":"9.0.0"}}`, version: "3.4.0", wantErr: "parsing Ignition config"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := ServedInput{Config: testMC(t, tc.config), Extras: Extras{KubeletCA: []byte(tc.kubeletCA), Kubeconfig: []byte(tc.kubecfg), PullSecret: []byte(tc.pullSec)}}
			served, err := BuildServedConfig(in, ignition.MustVersion(tc.version))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(served), `"version":"`+tc.version+`"`) {
				t.Fatalf("served document is not spec %s: %.200s", tc.version, served)
			}
			cfg, err := ignition.Parse(served)
			if err != nil {
				t.Fatalf("served config does not parse: %v", err)
			}
			// Order as sent (parsing spec 2.2 back reorders files).
			var wire struct {
				Storage struct{ Files []struct{ Path string } }
			}
			mustJSON(t, served, &wire)
			if last := wire.Storage.Files[len(wire.Storage.Files)-1].Path; last != EncapsulatedConfigPath {
				t.Errorf("last file is %s, want the encapsulated config", last)
			}
			if tc.check != nil {
				tc.check(t, cfg, served)
			}
		})
	}
}

func TestBuildServedConfigLeavesInputAlone(t *testing.T) {
	mc := testMC(t, withKargs)
	before := mc.DeepCopy()
	if _, err := BuildServedConfig(ServedInput{Config: mc}, ignition.V3_1); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(mc.Spec.KernelArguments, before.Spec.KernelArguments) || string(mc.Spec.Config.Raw) != string(before.Spec.Config.Raw) || mc.Kind != "" {
		t.Fatalf("input MachineConfig modified: %+v", mc)
	}
}

// checkPullSecretFile: the pull secret is served once, with content, root-owned, 0600, overwriting.
func checkPullSecretFile(t *testing.T, cfg ignition.Config, content string) {
	t.Helper()
	if n := strings.Count(strings.Join(filePaths(cfg), " "), PullSecretPath); n != 1 {
		t.Fatalf("pull secret appears %d times in %v", n, filePaths(cfg))
	}
	f := findFile(cfg, PullSecretPath)
	if got := string(fileBytes(t, cfg, PullSecretPath)); got != content {
		t.Errorf("pull secret = %q, want %q", got, content)
	}
	if f.Mode == nil || *f.Mode != 0o600 || f.Overwrite == nil || !*f.Overwrite {
		t.Errorf("pull secret mode %v overwrite %v, want 0600 true", f.Mode, f.Overwrite)
	}
	if f.User.ID == nil || *f.User.ID != 0 || f.Group.ID == nil || *f.Group.ID != 0 {
		t.Errorf("pull secret owner %+v group %+v, want root", f.User, f.Group)
	}
}

func filePaths(cfg ignition.Config) []string {
	var paths []string
	for _, f := range cfg.Storage.Files {
		paths = append(paths, f.Path)
	}
	return paths
}

func findFile(cfg ignition.Config, path string) types.File {
	for _, f := range cfg.Storage.Files {
		if f.Path == path {
			return f
		}
	}
	return types.File{}
}

// fileBytes decodes a file's data URL, gunzipping when the file says so.
func fileBytes(t *testing.T, cfg ignition.Config, path string) []byte {
	t.Helper()
	f := findFile(cfg, path)
	if f.Contents.Source == nil {
		t.Fatalf("no file %s", path)
	}
	u, err := dataurl.DecodeString(*f.Contents.Source)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if f.Contents.Compression != nil && *f.Contents.Compression == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(u.Data))
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	return u.Data
}

func mustJSON(t *testing.T, data []byte, into any) {
	t.Helper()
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("%v: %.200s", err, data)
	}
}
