package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/yaml"
)

// BootstrapOptions configure bootstrap mode: serving from the files OpenShift's
// `machine-config-controller bootstrap` writes, before any cluster exists.
type BootstrapOptions struct {
	// Dir holds machine-pools/<pool>.yaml, machine-configs/<name>.yaml and optionally
	// controller-config/machine-config-controller.yaml.
	Dir string
	// KubeconfigFile, when set and present, is served as /etc/kubernetes/kubeconfig.
	KubeconfigFile string
	// TokensFile lists per-pool bearer tokens (see LoadTokensFile); pools it does not list are
	// refused unless the server allows unauthenticated requests.
	TokensFile string
	// PullSecretFile, when set and present, is served as /var/lib/kubelet/config.json (see
	// ReadPullSecretFile).
	PullSecretFile string
}

// RunBootstrap serves every pool under opts.Dir (unlike the original, which refuses all but
// master), reloading when the files change, until ctx ends.
func RunBootstrap(ctx context.Context, store *Store, opts BootstrapOptions, log *slog.Logger) error {
	load := func() (map[string]PoolState, error) { return LoadBootstrap(opts) }
	return runStandalone(ctx, store, load, []string{opts.Dir, opts.KubeconfigFile, opts.TokensFile, opts.PullSecretFile}, log)
}

// LoadBootstrap reads the bootstrap layout into pool states.
func LoadBootstrap(opts BootstrapOptions) (map[string]PoolState, error) {
	poolFiles, err := filepath.Glob(filepath.Join(opts.Dir, "machine-pools", "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(poolFiles) == 0 {
		return nil, fmt.Errorf("bootstrap dir %s: no machine-pools/*.yaml", opts.Dir)
	}
	kubeletCA, err := bootstrapKubeletCA(opts.Dir)
	if err != nil {
		return nil, err
	}
	in, err := readStandaloneInputs(opts.KubeconfigFile, opts.TokensFile, opts.PullSecretFile)
	if err != nil {
		return nil, err
	}
	pools := make(map[string]PoolState, len(poolFiles))
	for _, file := range poolFiles {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		state, err := loadBootstrapPool(opts.Dir, file, name)
		if err != nil {
			return nil, err
		}
		pools[name] = state
	}
	in.serve(pools, kubeletCA)
	return pools, nil
}

// loadBootstrapPool resolves a pool file, served as name, to its rendered config:
// status.configuration (what the pool's nodes run) if set, else spec.configuration.
func loadBootstrapPool(dir, poolFile, name string) (PoolState, error) {
	var pool mcfgv1.MachineConfigPool
	if err := readYAML(poolFile, &pool); err != nil {
		return PoolState{}, err
	}
	// Served under its file's name, whatever metadata.name says: that is the name the etcd_index
	// default goes by too.
	pool.Name = name
	rendered := pool.Status.Configuration.Name
	if rendered == "" {
		rendered = pool.Spec.Configuration.Name
	}
	if rendered == "" {
		return PoolState{NotFound: true, Err: fmt.Errorf("%s names no rendered config", poolFile)}, nil
	}
	mcFile := filepath.Join(dir, "machine-configs", rendered+".yaml")
	raw, err := os.ReadFile(mcFile)
	if errors.Is(err, os.ErrNotExist) {
		return PoolState{NotFound: true, Err: fmt.Errorf("rendered config %s: %w", rendered, err)}, nil
	}
	if err != nil {
		return PoolState{}, err
	}
	var mc mcfgv1.MachineConfig
	if err := yaml.Unmarshal(raw, &mc); err != nil {
		return PoolState{}, fmt.Errorf("%s: %w", mcFile, err)
	}
	if mc.Name == "" {
		mc.Name = rendered
	}
	return PoolState{Served: ServedInput{Config: &mc}, Key: contentKey(raw), EtcdIndex: EtcdIndexOf(&pool)}, nil
}

// bootstrapKubeletCA is the API server serving CA from the optional ControllerConfig file.
func bootstrapKubeletCA(dir string) ([]byte, error) {
	path := filepath.Join(dir, "controller-config", "machine-config-controller.yaml")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	var cc mcfgv1.ControllerConfig
	if err := readYAML(path, &cc); err != nil {
		return nil, err
	}
	return cc.Spec.KubeAPIServerServingCAData, nil
}

func readYAML(path string, into any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
