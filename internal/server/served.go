package server

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/coreos/go-semver/semver"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/vincent-petithory/dataurl"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/mco-dev/mco/internal/etcdindex"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
)

// Paths of the files the server adds to every served config (mco-behaviour §5.5).
const (
	KubeletCAPath          = "/etc/kubernetes/kubelet-ca.crt"
	NodeAnnotationsPath    = protocol.NodeAnnotationsPath
	KubeconfigPath         = "/etc/kubernetes/kubeconfig"
	MachineConfigCopyPath  = "/etc/mcs-machine-config-content.json"
	EncapsulatedConfigPath = protocol.EncapsulatedConfigPath
	// PullSecretPath is where the kubelet and CRI-O read the cluster's pull secret, and where
	// the first-boot service finds it to pull spec.osImageURL (as on OpenShift nodes).
	PullSecretPath = protocol.PullSecretPath
)

// ServedInput is everything a served config is built from.
type ServedInput struct {
	// Config is the rendered MachineConfig to serve.
	Config *mcfgv1.MachineConfig
	Extras
}

// Extras are what every pool's served config gets besides its rendered config, the same for
// all pools of a source.
type Extras struct {
	// KubeletCA, when set, becomes KubeletCAPath so even paused pools get the current CA.
	KubeletCA []byte
	// Kubeconfig, when set, becomes KubeconfigPath: the new machine's credential to join.
	Kubeconfig []byte
	// PullSecret, when set, becomes PullSecretPath (root, 0600): the registry credentials the
	// first boot pulls the OS image with and the kubelet pulls the cluster's images with.
	PullSecret []byte
}

// key hashes the extras, once per load: it goes into every pool's key.
func (e Extras) key() string { return contentKey(e.KubeletCA, e.Kubeconfig, e.PullSecret) }

// addExtras gives st the extras and folds their key (Extras.key) into its own, so a changed
// CA, kubeconfig or pull secret rebuilds the cached bytes. A state without a key has nothing
// to serve and keeps none.
func (st *PoolState) addExtras(e Extras, key string) {
	st.Served.Extras = e
	if st.Key != "" {
		st.Key += "/" + key
	}
}

// BuildServedConfig returns the Ignition document a new machine receives for in, in spec
// version. It adds, in OpenShift's order, the kubelet CA, the node annotations the agent seeds
// its Node with, the kubeconfig (then the pull secret, which OpenShift's server does not add
// because its rendered configs carry it), a gzipped copy of the MachineConfig (spec 3 only; spec 2.2 gets
// it plain) and, last, the MachineConfig with an empty Ignition config, which carries OS image,
// kernel arguments, extensions, kernel type and FIPS to the first-boot service.
func BuildServedConfig(in ServedInput, version semver.Version) ([]byte, error) {
	return buildServed(in, version, nil)
}

// BuildTemplatedServedConfig is BuildServedConfig for /config/<pool>?etcd_index=index (seed
// 003): the rendered config's own file contents, unit contents and dropins that refer to the
// index are executed as templates with etcd_index = index (etcdindex.Apply; every other content
// stays byte for byte), never what the server adds, and the index is left in
// etcdindex.IndexPath so the node agent templates later configs the same way. A content that
// refers to the index but cannot be templated fails the whole build with an *etcdindex.Error: never a
// partial config.
func BuildTemplatedServedConfig(in ServedInput, version semver.Version, index int) ([]byte, error) {
	return buildServed(in, version, &index)
}

func buildServed(in ServedInput, version semver.Version, etcdIndex *int) ([]byte, error) {
	if in.Config == nil {
		return nil, fmt.Errorf("no MachineConfig to serve")
	}
	cfg, err := ignition.Parse(in.Config.Spec.Config.Raw)
	if err != nil {
		return nil, fmt.Errorf("parsing Ignition config of MachineConfig %s: %w", in.Config.Name, err)
	}
	if etcdIndex != nil {
		if cfg, err = etcdindex.Apply(cfg, *etcdIndex); err != nil {
			return nil, fmt.Errorf("MachineConfig %s with %s %d:\n%w", in.Config.Name, etcdindex.Variable, *etcdIndex, err)
		}
	}

	encapsulated := in.Config.DeepCopy()
	if version.LessThan(ignition.V3_3) {
		if err := moveKernelArguments(&cfg, encapsulated); err != nil {
			return nil, err
		}
	}

	if len(in.KubeletCA) > 0 {
		setFile(&cfg, KubeletCAPath, plainContents(in.KubeletCA))
	}
	annotations, err := nodeAnnotations(in.Config.Name)
	if err != nil {
		return nil, err
	}
	setFile(&cfg, NodeAnnotationsPath, plainContents(annotations))
	if etcdIndex != nil {
		setFile(&cfg, etcdindex.IndexPath, plainContents([]byte(strconv.Itoa(*etcdIndex)+"\n")))
	}
	if len(in.Kubeconfig) > 0 {
		setFile(&cfg, KubeconfigPath, plainContents(in.Kubeconfig))
	}
	// Added whenever there is a pull secret, not only when the config names an OS image:
	// OpenShift writes it on every node (its templates render it into every pool's config),
	// and the kubelet needs it for the cluster's own images as much as the first boot needs it
	// to pivot to spec.osImageURL. A rendered config that carries the file itself keeps its
	// copy: the node agent checks that path against the config, so replacing it would show as
	// drift on the agent's first check.
	if len(in.PullSecret) > 0 && !hasFile(&cfg, PullSecretPath) {
		secret := setFile(&cfg, PullSecretPath, plainContents(in.PullSecret))
		secret.Mode = ptr.To(0o600)
		secret.User = types.NodeUser{ID: ptr.To(0)}
		secret.Group = types.NodeGroup{ID: ptr.To(0)}
	}
	fullCopy, err := json.Marshal(withTypeMeta(in.Config.DeepCopy()))
	if err != nil {
		return nil, err
	}
	if version.Major >= 3 {
		contents, err := gzipContents(fullCopy)
		if err != nil {
			return nil, err
		}
		setFile(&cfg, MachineConfigCopyPath, contents)
	} else {
		setFile(&cfg, MachineConfigCopyPath, plainContents(fullCopy))
	}
	encapsulatedJSON, err := encapsulate(encapsulated, version)
	if err != nil {
		return nil, err
	}
	setFile(&cfg, EncapsulatedConfigPath, plainContents(encapsulatedJSON))

	return ignition.Convert(cfg, version)
}

// moveKernelArguments carries Ignition kernelArguments.shouldExist into the MachineConfig's
// kernelArguments for specs before 3.3, which cannot express them; the first-boot service
// applies those. shouldNotExist has no such home, so such a config cannot be served below 3.3.
func moveKernelArguments(cfg *ignition.Config, mc *mcfgv1.MachineConfig) error {
	if len(cfg.KernelArguments.ShouldNotExist) > 0 {
		return fmt.Errorf("MachineConfig %s uses kernelArguments.shouldNotExist, which Ignition specs before 3.3 cannot express", mc.Name)
	}
	for _, arg := range cfg.KernelArguments.ShouldExist {
		if !slices.Contains(mc.Spec.KernelArguments, string(arg)) {
			mc.Spec.KernelArguments = append(mc.Spec.KernelArguments, string(arg))
		}
	}
	cfg.KernelArguments = types.KernelArguments{}
	return nil
}

// nodeAnnotations is the file the node agent reads on first boot to seed its Node: the machine
// is, wants to be, and first pivoted into the served config.
func nodeAnnotations(rendered string) ([]byte, error) {
	return json.Marshal(map[string]string{
		protocol.CurrentConfigAnnotation:    rendered,
		protocol.DesiredConfigAnnotation:    rendered,
		protocol.FirstPivotConfigAnnotation: rendered,
		protocol.StateAnnotation:            string(protocol.NodeDone),
	})
}

// encapsulate is the MachineConfig with its Ignition config emptied (at the served spec
// version, so the reader can parse it the same way as the served document).
func encapsulate(mc *mcfgv1.MachineConfig, version semver.Version) ([]byte, error) {
	empty, err := json.Marshal(map[string]map[string]string{"ignition": {"version": version.String()}})
	if err != nil {
		return nil, err
	}
	mc.Spec.Config = runtime.RawExtension{Raw: empty}
	return json.Marshal(withTypeMeta(mc))
}

// withTypeMeta makes the JSON self-describing and drops server-side bookkeeping a reader on the
// node has no use for.
func withTypeMeta(mc *mcfgv1.MachineConfig) *mcfgv1.MachineConfig {
	mc.APIVersion = mcfgv1.GroupVersion.String()
	mc.Kind = "MachineConfig"
	mc.ManagedFields = nil
	return mc
}

// setFile replaces the file at path if the config already has one (so an admin's copy of,
// say, the kubelet CA is superseded rather than duplicated, which Ignition rejects) and
// appends it otherwise. Every added file is root-owned 0644 and overwrites what is on disk;
// the returned file is the one in cfg, for a caller that needs another mode.
func setFile(cfg *ignition.Config, path string, contents types.Resource) *types.File {
	file := types.File{
		Node:          types.Node{Path: path, Overwrite: ptr.To(true)},
		FileEmbedded1: types.FileEmbedded1{Contents: contents, Mode: ptr.To(0o644)},
	}
	for i := range cfg.Storage.Files {
		if cfg.Storage.Files[i].Path == path {
			cfg.Storage.Files[i] = file
			return &cfg.Storage.Files[i]
		}
	}
	cfg.Storage.Files = append(cfg.Storage.Files, file)
	return &cfg.Storage.Files[len(cfg.Storage.Files)-1]
}

func hasFile(cfg *ignition.Config, path string) bool {
	return slices.ContainsFunc(cfg.Storage.Files, func(f types.File) bool { return f.Path == path })
}

func plainContents(data []byte) types.Resource {
	return types.Resource{Source: ptr.To("data:," + dataurl.Escape(data))}
}

func gzipContents(data []byte) (types.Resource, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return types.Resource{}, err
	}
	if _, err := zw.Write(data); err != nil {
		return types.Resource{}, err
	}
	if err := zw.Close(); err != nil {
		return types.Resource{}, err
	}
	return types.Resource{
		Source:      ptr.To("data:;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())),
		Compression: ptr.To("gzip"),
	}, nil
}
