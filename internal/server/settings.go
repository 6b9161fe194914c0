package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mco-dev/mco/internal/clientconfig"
	"github.com/mco-dev/mco/internal/metricsauth"
	"github.com/mco-dev/mco/internal/render"
)

// Settings are `mco server`'s flags as given; Serve picks the mode they name and runs it.
type Settings struct {
	Kubeconfig, BootstrapDir, BootstrapKubeconfig, FromDir string
	Namespace, APIServerURL, BootstrapTokenSecret          string
	TokensFile                                             string
	AllowUnauthenticated                                   bool
	PullSecret, PullSecretFile                             string
	TokenOverlap                                           time.Duration
	KubeletCAFile, OSImageURL, ExtensionsImage             string
	BindAddress                                            string
	SecurePort, InsecurePort                               int
	CertFile, KeyFile, MetricsAddress, MetricsCertDir      string
	LogFormat, MemoryLimit                                 string
	RateLimit                                              float64
	RateLimitBurst, MaxConnections, MaxHeaderBytes         int
}

// Serve runs the server process s describes until ctx ends: its logger (controller-runtime's
// too), the Go runtime's memory limit, the one mode's Source, then Run. It sets those process
// globals, so a command calls it once.
func (s Settings) Serve(ctx context.Context) error {
	log, err := s.logger()
	if err != nil {
		return err
	}
	// controller-runtime (informers, certificate watcher) logs through its own global logger.
	ctrllog.SetLogger(logr.FromSlogHandler(log.Handler()))
	source, err := s.source(log)
	if err != nil {
		return err
	}
	metricsGuard, err := s.metricsGuard(log)
	if err != nil {
		return err
	}
	if limit, apply, err := MemoryLimit(s.MemoryLimit, s.MaxConnections, s.BootstrapDir == "" && s.FromDir == ""); err != nil {
		return err
	} else if apply {
		debug.SetMemoryLimit(limit)
	}
	return Run(ctx, source, Options{
		Listen: ListenOptions{
			SecureAddress:   portAddress(s.BindAddress, s.SecurePort),
			InsecureAddress: portAddress(s.BindAddress, s.InsecurePort),
			CertFile:        s.CertFile,
			KeyFile:         s.KeyFile,
			MetricsAddress:  s.MetricsAddress,
			MetricsGuard:    metricsGuard,
			MaxConnections:  s.MaxConnections,
			MaxHeaderBytes:  s.MaxHeaderBytes,
		},
		RateLimit:            RateLimit{PerSecond: s.RateLimit, Burst: s.RateLimitBurst},
		TokenOverlap:         s.TokenOverlap,
		AllowUnauthenticated: s.AllowUnauthenticated,
		Log:                  log,
	})
}

// source is the one mode s names: bootstrap, from-dir, or cluster (neither). Flags of another
// mode than the one named are refused, naming the flag.
func (s Settings) source(log *slog.Logger) (Source, error) {
	switch {
	case s.BootstrapDir != "" && s.FromDir != "":
		return nil, errors.New("--bootstrap-dir and --from-dir are different modes; give one")
	case s.BootstrapDir != "":
		opts := BootstrapOptions{Dir: s.BootstrapDir, KubeconfigFile: s.BootstrapKubeconfig, TokensFile: s.TokensFile, PullSecretFile: s.PullSecretFile}
		return func(ctx context.Context, store *Store) error { return RunBootstrap(ctx, store, opts, log) }, nil
	case s.FromDir != "":
		opts := FromDirOptions{
			Dir: s.FromDir, KubeconfigFile: s.BootstrapKubeconfig, KubeletCAFile: s.KubeletCAFile, TokensFile: s.TokensFile,
			PullSecretFile: s.PullSecretFile,
			Defaults:       render.Defaults{OSImageURL: s.OSImageURL, BaseOSExtensionsContainerImage: s.ExtensionsImage},
		}
		return func(ctx context.Context, store *Store) error { return RunFromDir(ctx, store, opts, log) }, nil
	}
	if s.TokensFile != "" {
		return nil, errors.New("--tokens-file is for the standalone modes; in cluster mode tokens come from Secrets <pool>-mcs-token")
	}
	if s.PullSecretFile != "" {
		return nil, errors.New("--pull-secret-file is for the standalone modes; in cluster mode the pull secret is the Secret --pull-secret names")
	}
	psNamespace, psName, err := ParsePullSecretRef(s.PullSecret)
	if err != nil {
		return nil, fmt.Errorf("--pull-secret: %w", err)
	}
	cfg, err := clientconfig.Load(s.Kubeconfig)
	if err != nil {
		return nil, err
	}
	opts := ClusterOptions{
		Namespace: s.Namespace, APIServerURL: s.APIServerURL, BootstrapTokenSecret: s.BootstrapTokenSecret,
		PullSecret: types.NamespacedName{Namespace: psNamespace, Name: psName},
	}
	return func(ctx context.Context, store *Store) error { return RunCluster(ctx, cfg, store, opts, log) }, nil
}

// metricsGuard is how the metrics are served (metricsauth): off loopback, only cluster mode
// has the API server that reviews the scrapers' tokens.
func (s Settings) metricsGuard(log *slog.Logger) (*metricsauth.Guard, error) {
	e := metricsauth.Endpoint{Address: s.MetricsAddress, CertDir: s.MetricsCertDir}
	if !e.Served() {
		return nil, nil
	}
	guard, err := e.Guard(func() (*rest.Config, error) {
		if s.BootstrapDir != "" || s.FromDir != "" {
			return nil, nil
		}
		return clientconfig.Load(s.Kubeconfig)
	})
	if guard != nil && guard.SelfSigned {
		log.Warn("metrics are served with a self-signed certificate no scraper can verify: give --metrics-cert-dir", "address", s.MetricsAddress)
	}
	return guard, err
}

// portAddress is host:port, or "" (that listener off) for port 0.
func portAddress(host string, port int) string {
	if port == 0 {
		return ""
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// logger writes to stderr in the --log-format s names.
func (s Settings) logger() (*slog.Logger, error) {
	switch s.LogFormat {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, nil)), nil
	}
	return nil, fmt.Errorf("--log-format: unknown format %q (want text or json)", s.LogFormat)
}
