package containerdhosts

import (
	"errors"
	"strings"
	"testing"
)

// debianBookworm is the /etc/containerd/config.toml Debian bookworm's containerd 1.6.20 ships.
const debianBookworm = `version = 2

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "/etc/cni/net.d"
  [plugins."io.containerd.internal.v1.opt"]
    path = "/var/lib/containerd/opt"
`

func v2(registry string) string {
	return "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n" + registry
}

func v3(images string) string {
	return "version = 3\n[plugins.\"io.containerd.cri.v1.images\"]\n" + images
}

func TestCertsDirConfigured(t *testing.T) {
	const (
		v2Table = `plugins."io.containerd.grpc.v1.cri".registry`
		v3Table = `plugins."io.containerd.cri.v1.images".registry`
	)
	for _, tc := range []struct {
		name, config, version string
		// key is the ConfigError's Key, "" for none; remedy is a part of its reason.
		key, remedy string
	}{
		{name: "Debian bookworm's file: config_path unset, 1.6 reads no hosts.toml", config: debianBookworm, version: "containerd://1.6.20",
			key: v2Table + ".config_path", remedy: `set config_path = "/etc/containerd/certs.d" in [` + v2Table + `]`},
		{name: "no file on 1.x: version 1, the short plugin name", config: "", version: "1.7.24",
			key: "plugins.cri.registry.config_path", remedy: `set config_path = "/etc/containerd/certs.d" in [plugins.cri.registry]`},
		{name: "no file on 2.0: no default directory", config: "", version: "2.0.5", key: v3Table + ".config_path", remedy: "is not set"},
		{name: "no file on 2.2: the default list, which the transfer service reads as one directory", config: "", version: "containerd://2.2.1",
			key: v3Table + ".config_path", remedy: "use_local_image_pull = true"},
		{name: "1.6 with config_path", config: v2(`config_path = "/etc/containerd/certs.d"`), version: "containerd://1.6.20"},
		{name: "a trailing slash is the same directory", config: v2(`config_path = "/etc/containerd/certs.d/"`), version: "1.6.20"},
		{name: "1.x reads a list, ours first", config: v2(`config_path = "/etc/containerd/certs.d:/etc/docker/certs.d"`), version: "1.6.20"},
		{name: "2.0 reads a list too (no transfer service for the CRI yet)", config: v2(`config_path = "/etc/containerd/certs.d:/etc/docker/certs.d"`), version: "2.0.0"},
		{name: "2.1 with a list pulls through the transfer service and finds nothing", config: v2(`config_path = "/etc/containerd/certs.d:/etc/docker/certs.d"`), version: "2.1.4",
			key: v2Table + ".config_path", remedy: "single directory"},
		{name: "2.1 with a list and local pulls", config: v2(`config_path = "/etc/containerd/certs.d:/etc/docker/certs.d"`) + "\n[plugins.\"io.containerd.cri.v1.images\"]\nuse_local_image_pull = true\n", version: "2.1.4"},
		{name: "2.2 default list with local pulls", config: v3("use_local_image_pull = true\n"), version: "2.2.0"},
		{name: "ours not first: an earlier directory can hide it", config: v2(`config_path = "/etc/docker/certs.d:/etc/containerd/certs.d"`), version: "1.6.20",
			key: v2Table + ".config_path", remedy: "must come first"},
		{name: "another directory", config: v2(`config_path = "/etc/registries"`), version: "1.6.20", key: v2Table + ".config_path", remedy: "must come first"},
		{name: "deprecated mirrors without config_path: only they are read", config: v2("[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"docker.io\"]\nendpoint = [\"https://m.example.com\"]\n"),
			version: "1.6.20", key: v2Table + ".mirrors", remedy: "remove registry.mirrors"},
		{name: "deprecated mirrors with config_path: the CRI plugin does not load", config: v2("config_path = \"/etc/containerd/certs.d\"\n[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"docker.io\"]\nendpoint = [\"https://m.example.com\"]\n"),
			version: "2.1.0", key: v2Table + ".mirrors", remedy: "remove registry.mirrors"},
		{name: "deprecated configs.tls", config: v2("config_path = \"/etc/containerd/certs.d\"\n[plugins.\"io.containerd.grpc.v1.cri\".registry.configs.\"r.example.com\".tls]\ninsecure_skip_verify = true\n"),
			version: "1.6.20", key: v2Table + `.configs."r.example.com".tls`, remedy: "hosts.toml"},
		{name: "configs.auth still works with config_path", config: v2("config_path = \"/etc/containerd/certs.d\"\n[plugins.\"io.containerd.grpc.v1.cri\".registry.configs.\"r.example.com\".auth]\nusername = \"u\"\n"),
			version: "1.6.20"},
		{name: "version 1 file on 1.x", config: "[plugins.cri.registry]\nconfig_path = \"/etc/containerd/certs.d\"\n", version: "1.6.20"},
		{name: "version 1 file's full name is not read by 1.x", config: v2(`config_path = "/etc/containerd/certs.d"`)[len("version = 2\n"):], version: "1.6.20",
			key: "plugins.cri.registry.config_path"},
		{name: "version 1 file on 2.x is migrated", config: "[plugins.cri.registry]\nconfig_path = \"/etc/containerd/certs.d\"\n", version: "2.1.4"},
		{name: "version 2 file on 2.x is migrated", config: v2(`config_path = "/etc/containerd/certs.d"`), version: "containerd://2.2.1"},
		{name: "version 2 file on 2.x with the images plugin's table", config: "version = 2\n[plugins.\"io.containerd.cri.v1.images\".registry]\nconfig_path = \"/etc/containerd/certs.d\"\n", version: "2.1.4"},
		{name: "version 3 file on 2.x", config: v3("[plugins.\"io.containerd.cri.v1.images\".registry]\nconfig_path = \"/etc/containerd/certs.d\"\n"), version: "2.2.1"},
		{name: "version 3 file's CRI table is not read by 2.x", config: "version = 3\n" + v2(`config_path = "/etc/containerd/certs.d"`)[len("version = 2\n"):], version: "2.0.0",
			key: v3Table + ".config_path"},
		{name: "version 3 file is not read by 1.x's CRI plugin", config: v3("[plugins.\"io.containerd.cri.v1.images\".registry]\nconfig_path = \"/etc/containerd/certs.d\"\n"), version: "1.7.24",
			key: v2Table + ".config_path"},
		{name: "imports could change it", config: "version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n" + v2(`config_path = "/etc/containerd/certs.d"`)[len("version = 2\n"):], version: "1.6.20",
			key: "imports"},
		{name: "unreadable file", config: "version = ", version: "1.6.20", key: "(file)"},
		{name: "unknown version", config: v2(`config_path = "/etc/containerd/certs.d"`), version: "cri-o://1.30.0", key: "(containerd version)"},
		{name: "a version mco does not know", config: v2(`config_path = "/etc/containerd/certs.d"`), version: "containerd://3.0.0", key: "(containerd version)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CertsDirConfigured([]byte(tc.config), tc.version)
			if tc.key == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *ConfigError on %s", err, tc.key)
			}
			if ce.Key != tc.key {
				t.Errorf("key %q, want %q (%v)", ce.Key, tc.key, err)
			}
			if !strings.Contains(ce.Reason, tc.remedy) || !strings.Contains(err.Error(), ContainerdConfigPath) {
				t.Errorf("%q does not name %s and say %q", err, ContainerdConfigPath, tc.remedy)
			}
		})
	}
}
