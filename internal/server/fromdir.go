package server

import (
	"context"
	"fmt"
	"log/slog"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/version"
)

// FromDirOptions configure from-dir mode: plain MachineConfig and MachineConfigPool manifests,
// rendered in-process — provisioning with MachineConfig semantics and no Kubernetes.
type FromDirOptions struct {
	// Dir is read with internal/manifest (recursive; .yaml, .yml, .json, Butane .bu).
	Dir string
	// KubeconfigFile and KubeletCAFile, when set and present, are served as
	// /etc/kubernetes/kubeconfig and /etc/kubernetes/kubelet-ca.crt.
	KubeconfigFile, KubeletCAFile string
	// TokensFile lists per-pool bearer tokens (see LoadTokensFile); pools it does not list are
	// refused unless the server allows unauthenticated requests.
	TokensFile string
	// PullSecretFile, when set and present, is served as /var/lib/kubelet/config.json (see
	// ReadPullSecretFile).
	PullSecretFile string
	// Defaults fill the OS image fields no MachineConfig sets.
	Defaults render.Defaults
}

// RunFromDir renders and serves every pool in opts.Dir, re-rendering when files change,
// until ctx ends.
func RunFromDir(ctx context.Context, store *Store, opts FromDirOptions, log *slog.Logger) error {
	// Kept across reloads: an edit usually touches one file, so the other MachineConfigs need
	// not be parsed again, and each is parsed once however many pools select it.
	parses := render.NewParseCache(parseCacheLimit)
	load := func() (map[string]PoolState, error) { return LoadFromDir(opts, parses, log) }
	paths := []string{opts.Dir, opts.KubeconfigFile, opts.KubeletCAFile, opts.TokensFile, opts.PullSecretFile}
	return runStandalone(ctx, store, load, paths, log)
}

// parseCacheLimit bounds the parses RunFromDir remembers; past it the cache starts over, which
// only costs re-parsing.
const parseCacheLimit = 4096

// LoadFromDir renders each pool found in opts.Dir, parsing Ignition configs through parses. A
// pool that fails to render is kept, with its error (answered as 500 and logged), so one broken
// pool does not stop the others.
func LoadFromDir(opts FromDirOptions, parses *render.ParseCache, log *slog.Logger) (map[string]PoolState, error) {
	set, err := manifest.Load(manifest.Options{}, opts.Dir)
	if err != nil {
		return nil, err
	}
	pools, configs := set.Pools, set.MachineConfigs
	if len(pools) == 0 {
		return nil, fmt.Errorf("%s: no MachineConfigPool manifests", opts.Dir)
	}
	kubeletCA, err := readOptional(opts.KubeletCAFile)
	if err != nil {
		return nil, err
	}
	in, err := readStandaloneInputs(opts.KubeconfigFile, opts.TokensFile, opts.PullSecretFile)
	if err != nil {
		return nil, err
	}
	renderOpts := render.Options{
		Defaults: opts.Defaults,
		// The commit, as `mco render` and the controller stamp it, so from-dir serves exactly
		// what `mco render` prints.
		ControllerVersion: version.Get().Commit,
		Parse:             parses.ParseWithWarnings,
	}
	states := make(map[string]PoolState, len(pools))
	for _, pool := range pools {
		state := renderPool(pool, configs, renderOpts)
		if state.Err != nil {
			log.Error("pool does not render; its requests fail until fixed", "pool", pool.Name, "err", state.Err)
		}
		state.EtcdIndex = EtcdIndexOf(pool)
		states[pool.Name] = state
	}
	in.serve(states, kubeletCA)
	return states, nil
}

func renderPool(pool *mcfgv1.MachineConfigPool, configs []*mcfgv1.MachineConfig, opts render.Options) PoolState {
	result, err := render.Render(pool, configs, opts)
	if err != nil {
		return PoolState{Err: err}
	}
	// The rendered name is a hash of the rendered content, so it is the cache key.
	return PoolState{Served: ServedInput{Config: result.Config}, Key: result.Config.Name}
}
