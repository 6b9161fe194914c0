package containerdhosts

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// ContainerdConfigPath is containerd's configuration file.
const ContainerdConfigPath = "/etc/containerd/config.toml"

// The CRI's plugin keys: containerd 1.x reads the image registry settings from the CRI plugin
// ("cri" in a version 1 file, its full URI from version 2 on); 2.x from the images plugin, into
// which it migrates a version 1 or 2 file's CRI registry table on load
// (plugins/cri/images/plugin.go, configMigration).
const (
	criPluginV1    = "cri"
	criPlugin      = "io.containerd.grpc.v1.cri"
	imagesPlugin2x = "io.containerd.cri.v1.images"
)

var runtimeVersionPattern = regexp.MustCompile(`^(?:containerd://)?v?(\d+)\.(\d+)`)

// CertsDirConfigured returns nil when containerd at runtimeVersion (as the Node reports it in
// status.nodeInfo.containerRuntimeVersion, "containerd://1.6.20", or plain "1.6.20"), given
// configTOML as /etc/containerd/config.toml (empty when there is none), reads a registry's
// hosts.toml from CertsDir for the CRI's pulls; otherwise a *ConfigError saying what to set
// where. Without it, the files FromRegistriesConf makes would be written and have no effect.
func CertsDirConfigured(configTOML []byte, runtimeVersion string) error {
	m := runtimeVersionPattern.FindStringSubmatch(runtimeVersion)
	if m == nil {
		return &ConfigError{Key: "(containerd version)", Reason: fmt.Sprintf("cannot tell containerd's version from %q, and what it reads depends on it", runtimeVersion)}
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major != 1 && major != 2 {
		return &ConfigError{Key: "(containerd version)", Reason: fmt.Sprintf("containerd %s is not one whose registry configuration mco knows (1.x, 2.x)", runtimeVersion)}
	}
	var conf map[string]any
	if _, err := toml.Decode(string(configTOML), &conf); err != nil {
		return &ConfigError{Key: "(file)", Reason: fmt.Sprintf("cannot be read: %v", err)}
	}
	if imports, _ := conf["imports"].([]any); len(imports) > 0 {
		return &ConfigError{Key: "imports", Reason: "imported files can change the registry settings, and mco checks only this file: set the registry settings here and drop the imports"}
	}
	version := int64(1) // containerd reads a file without a version as version 1
	if v, ok := conf["version"].(int64); ok {
		version = v
	}
	plugins, _ := conf["plugins"].(map[string]any)
	s := registrySettings(plugins, major, version)

	if len(s.mirrors) > 0 {
		// With config_path set, containerd refuses to load the CRI plugin ("`mirrors` cannot be
		// set when `config_path` is provided": 1.6 pkg/cri/config/config.go
		// ValidatePluginConfig, 2.x internal/cri/config/config.go ValidateImageConfig);
		// without it, the CRI reads only registry.mirrors and never CertsDir.
		return &ConfigError{Key: s.table + ".mirrors", Reason: "is set, and then containerd reads no hosts.toml (with config_path set too, its CRI plugin does not even load); move the mirrors into hosts.toml files and remove registry.mirrors"}
	}
	if host := s.tlsConfigHost(); host != "" {
		// 1.x refuses to load the CRI plugin ("`configs.tls` cannot be set when `config_path`
		// is provided", ValidatePluginConfig); 2.x reads only the host directories once
		// config_path is set (internal/cri/server/images/image_pull.go, registryHosts), so
		// these TLS settings would be dropped without a word.
		return &ConfigError{Key: s.table + ".configs." + strconv.Quote(host) + ".tls", Reason: "is set; with config_path containerd does not use it (1.x does not even load its CRI plugin): move it into that registry's hosts.toml (ca, client, skip_verify)"}
	}
	configPath := s.configPath
	if configPath == "" && major == 2 && minor >= 2 {
		// Since 2.2 an empty config_path means both Docker's and containerd's directories
		// (plugins/cri/images/plugin.go); before, and in 1.x, it means none.
		configPath = CertsDir + ":/etc/docker/certs.d"
	}
	set := fmt.Sprintf("set config_path = %q in [%s]", CertsDir, s.table)
	var dirs []string
	for _, d := range strings.Split(configPath, ":") {
		if d != "" {
			dirs = append(dirs, path.Clean(d))
		}
	}
	switch {
	case len(dirs) == 0:
		return &ConfigError{Key: s.table + ".config_path", Reason: fmt.Sprintf("is not set, so containerd %d.%d reads no hosts.toml: %s", major, minor, set)}
	case dirs[0] != CertsDir:
		// The first directory holding the registry's directory, or a _default one, wins
		// (HostDirFromRoot, hostDirFromRoots), so an earlier one can hide mco's files.
		return &ConfigError{Key: s.table + ".config_path", Reason: fmt.Sprintf("is %q: containerd takes a registry's hosts.toml from the first of these directories that has one for it (or a _default), so %s must come first", configPath, CertsDir)}
	case len(dirs) > 1 && major == 2 && minor >= 1 && !s.localPull:
		// Since 2.1 the CRI pulls through the transfer service unless told otherwise, and that
		// takes config_path as one directory (core/transfer/registry/registry.go,
		// HostDirFromRoot(ropts.hostDir); containerd issue #12808), so it finds nothing in a
		// list, the 2.2+ default included.
		return &ConfigError{Key: s.table + ".config_path", Reason: fmt.Sprintf("is %q: containerd %d.%d pulls for the kubelet through its transfer service, which takes config_path as a single directory and so reads none of these; %s alone, or use_local_image_pull = true in [plugins.%q]", configPath, major, minor, set, imagesPlugin2x)}
	}
	return nil
}

// registry is the CRI registry settings containerd uses, and where they are.
type registry struct {
	table      string
	configPath string
	mirrors    map[string]any
	configs    map[string]any
	localPull  bool
}

func registrySettings(plugins map[string]any, major int, version int64) registry {
	key := criPlugin
	if version < 2 {
		key = criPluginV1
	}
	if major == 2 {
		images, _ := plugins[imagesPlugin2x].(map[string]any)
		local, _ := images["use_local_image_pull"].(bool)
		// A version 1 or 2 file's CRI registry table replaces the images plugin's on load; where
		// neither is written, the remedy goes to the table the file already has.
		_, hasCRI := plugins[key]
		if version >= 3 || (!hasRegistry(plugins, key) && (hasRegistry(plugins, imagesPlugin2x) || !hasCRI)) {
			r := registryAt(plugins, imagesPlugin2x)
			r.localPull = local
			return r
		}
		r := registryAt(plugins, key)
		r.localPull = local
		return r
	}
	return registryAt(plugins, key)
}

func hasRegistry(plugins map[string]any, key string) bool {
	p, _ := plugins[key].(map[string]any)
	_, ok := p["registry"]
	return ok
}

func registryAt(plugins map[string]any, key string) registry {
	name := key
	if strings.Contains(key, ".") {
		name = strconv.Quote(key)
	}
	p, _ := plugins[key].(map[string]any)
	reg, _ := p["registry"].(map[string]any)
	r := registry{table: "plugins." + name + ".registry"}
	r.configPath, _ = reg["config_path"].(string)
	r.mirrors, _ = reg["mirrors"].(map[string]any)
	r.configs, _ = reg["configs"].(map[string]any)
	return r
}

// tlsConfigHost is the first registry of registry.configs with a tls table, "" when none has.
func (r registry) tlsConfigHost() string {
	for _, host := range slices.Sorted(maps.Keys(r.configs)) {
		if c, ok := r.configs[host].(map[string]any); ok {
			if _, ok := c["tls"]; ok {
				return host
			}
		}
	}
	return ""
}
