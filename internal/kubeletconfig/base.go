package kubeletconfig

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/vincent-petithory/dataurl"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/render"
)

// KubeletConfPath is where the kubelet reads its configuration on OpenShift nodes (kubelet
// --config), and the file a KubeletConfig's MachineConfig replaces.
const KubeletConfPath = "/etc/kubernetes/kubelet.conf"

// DefaultBaseSource names the built-in default in messages and status.
const DefaultBaseSource = "the built-in default kubelet configuration"

//go:embed default-kubelet.conf.yaml
var defaultKubeletConf []byte

// DefaultKubeletConf is the base for a pool none of whose MachineConfigs provides
// KubeletConfPath: a vanilla Kubernetes kubelet as kubeadm configures one (see
// docs/generated-configs.md).
func DefaultKubeletConf() []byte { return bytes.Clone(defaultKubeletConf) }

// Base is the kubelet configuration a KubeletConfig is merged over, and where it came from.
type Base struct {
	// Source is the MachineConfig that provided it, or DefaultBaseSource.
	Source string
	Config *kubeletv1beta1.KubeletConfiguration
}

// FindBase returns pool's base kubelet configuration: KubeletConfPath as the pool's render
// would leave it without any KubeletConfig, i.e. from the last MachineConfig in merge order
// that writes it, leaving out every generated kubelet MachineConfig (ours would otherwise become
// its own base and compound on each sync). On OpenShift that is 98-<pool>-generated-kubelet (the
// template's kubelet.conf with the cluster's feature gates), else 01-<role>-kubelet. When no
// MachineConfig writes it, the built-in default. parse reads a MachineConfig's Ignition.
func FindBase(pool *mcfgv1.MachineConfigPool, all []*mcfgv1.MachineConfig, parse func(*mcfgv1.MachineConfig) (ignition.Config, error)) (Base, error) {
	selected, err := render.Select(pool, all)
	if err != nil {
		return Base{}, err
	}
	var from *mcfgv1.MachineConfig
	var source, compression *string
	for _, mc := range selected {
		if IsGenerated(mc) {
			continue
		}
		cfg, err := parse(mc)
		if err != nil {
			return Base{}, err
		}
		for _, l := range cfg.Storage.Links {
			if l.Path == KubeletConfPath {
				return Base{}, fmt.Errorf("MachineConfig %s: storage.links: %s is a link; the base kubelet configuration must be a file", mc.Name, KubeletConfPath)
			}
		}
		for _, f := range cfg.Storage.Files {
			if f.Path != KubeletConfPath {
				continue
			}
			if len(f.Append) > 0 {
				return Base{}, fmt.Errorf("MachineConfig %s: storage.files[%s].append: appending to the base kubelet configuration is not supported; replace its contents", mc.Name, KubeletConfPath)
			}
			// Ignition's merge keeps the parent's contents when a child names the path without any.
			if f.Contents.Source != nil {
				from, source, compression = mc, f.Contents.Source, f.Contents.Compression
			}
		}
	}
	if from == nil {
		cfg, err := decode(defaultKubeletConf)
		if err != nil {
			return Base{}, fmt.Errorf("%s: %w", DefaultBaseSource, err)
		}
		return Base{Source: DefaultBaseSource, Config: cfg}, nil
	}
	data, err := fileContents(*source, compression)
	if err != nil {
		return Base{}, fmt.Errorf("MachineConfig %s: storage.files[%s].contents: %w", from.Name, KubeletConfPath, err)
	}
	cfg, err := decode(data)
	if err != nil {
		return Base{}, fmt.Errorf("MachineConfig %s: %s is not a KubeletConfiguration: %w", from.Name, KubeletConfPath, err)
	}
	return Base{Source: "MachineConfig " + from.Name, Config: cfg}, nil
}

// IsGenerated reports whether mc is a KubeletConfig's MachineConfig: controlled by a
// KubeletConfig, or named like one (a generated name of the pool its role label names).
func IsGenerated(mc *mcfgv1.MachineConfig) bool {
	for _, ref := range mc.OwnerReferences {
		if ref.Kind == "KubeletConfig" && ref.Controller != nil && *ref.Controller {
			return true
		}
	}
	role := mc.Labels[protocol.RoleLabel]
	_, named := suffixOf(role, mc.Name)
	return role != "" && named
}

// fileContents decodes an inline Ignition source: the controller never fetches remote ones.
func fileContents(source string, compression *string) ([]byte, error) {
	if !strings.HasPrefix(source, "data:") {
		return nil, fmt.Errorf("source %.40q is not inline (a data URL); the controller does not fetch remote contents", source)
	}
	url, err := dataurl.DecodeString(source)
	if err != nil {
		return nil, fmt.Errorf("decoding the data URL: %w", err)
	}
	if compression == nil || *compression == "" {
		return url.Data, nil
	}
	if *compression != "gzip" {
		return nil, fmt.Errorf("unsupported compression %q", *compression)
	}
	r, err := gzip.NewReader(bytes.NewReader(url.Data))
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	return data, nil
}
