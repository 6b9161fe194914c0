//go:build !nodeagent && !mcocontroller

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mco-dev/mco/internal/clientconfig"
	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/server"
)

type serverFlags struct {
	kubeconfig, bootstrapDir, bootstrapKubeconfig, fromDir string
	namespace, apiServerURL, bootstrapTokenSecret          string
	tokensFile                                             string
	allowUnauthenticated                                   bool
	pullSecret, pullSecretFile                             string
	tokenOverlap                                           time.Duration
	kubeletCAFile, osImageURL, extensionsImage             string
	bindAddress                                            string
	securePort, insecurePort                               int
	certFile, keyFile, metricsAddress                      string
	logFormat, memoryLimit                                 string
	rateLimit                                              float64
	rateLimitBurst, maxConnections, maxHeaderBytes         int
}

func newServerCommand() *cobra.Command {
	var f serverFlags
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Serve each pool's rendered config as Ignition to new machines",
		Long: `Run the Machine Config Server: new machines boot with a small pointer Ignition config
and fetch their pool's full config from GET /config/<pool>, in the Ignition spec version their
Accept header asks for (2.2.0 or 3.1.0-3.5.0).

Modes (exactly one):
  cluster    (default; --kubeconfig, $KUBECONFIG or in-cluster) serve the pools of a cluster:
             a pool's spec.configuration once status.updatedMachineCount > 0, else
             status.configuration. Per-pool bearer tokens come from Secrets <pool>-mcs-token
             in --namespace (keys token, previous-token, previous-token-expires).
  bootstrap  (--bootstrap-dir) OpenShift's bootstrap layout: machine-pools/<pool>.yaml,
             machine-configs/<name>.yaml, controller-config/machine-config-controller.yaml.
  from-dir   (--from-dir) plain MachineConfig and MachineConfigPool manifests, rendered in
             process and re-rendered when files change.
In the standalone modes, tokens come from --tokens-file and files are reloaded on change.

Every pool needs a token: a request without the pool's current (or, until its expiry, previous)
token gets 403, and so does any request for a pool with no token configured. Each refusal is an
audit log line (audit=true, pool, client, userAgent, reason: no-token-configured,
missing-authorization or invalid-token) and counts in mcs_config_requests_refused_total.
--allow-unauthenticated serves pools without a token to anyone instead; the server warns at
start while it is on. In a cluster, mco controller creates and rotates the token Secrets.

Every served config carries the cluster's pull secret as /var/lib/kubelet/config.json (root,
0600) when there is one: the Secret named by --pull-secret (key .dockerconfigjson) in cluster
mode, --pull-secret-file otherwise. The first-boot service pulls the pool's OS image with it.

Endpoints: GET|HEAD /config/<pool>, /healthz; Prometheus metrics on --metrics-bind-address.
Each client address may make --rate-limit requests/s to /config/ (burst --rate-limit-burst);
over it the answer is 503 with Retry-After, which Ignition retries. Connections per listener
(--max-connections) and request header size (--max-header-bytes) are capped.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServer(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "cluster mode: kubeconfig file (default $KUBECONFIG, else in-cluster, else ~/.kube/config)")
	fl.StringVar(&f.bootstrapDir, "bootstrap-dir", "", "bootstrap mode: serve from this OpenShift bootstrap directory")
	fl.StringVar(&f.bootstrapKubeconfig, "bootstrap-kubeconfig", "", "bootstrap and from-dir modes: file served as /etc/kubernetes/kubeconfig (optional)")
	fl.StringVar(&f.fromDir, "from-dir", "", "from-dir mode: render and serve the MachineConfig and MachineConfigPool manifests in this directory")
	fl.StringVar(&f.namespace, "namespace", "openshift-machine-config-operator", "cluster mode: namespace of the token Secrets, the bootstrap token Secret and the kubeconfig-data ConfigMap")
	fl.StringVar(&f.apiServerURL, "apiserver-url", "", "cluster mode: API server URL written into served kubeconfigs (default: the URL this server uses)")
	fl.StringVar(&f.bootstrapTokenSecret, "bootstrap-token-secret", server.DefaultBootstrapTokenSecret, "cluster mode: Secret in --namespace with the kubelet bootstrap token (keys token, ca.crt)")
	fl.StringVar(&f.tokensFile, "tokens-file", "", "bootstrap and from-dir modes: YAML map of pool to {token, previousToken, previousTokenExpires}; pools not listed are refused unless --allow-unauthenticated")
	fl.BoolVar(&f.allowUnauthenticated, "allow-unauthenticated", false, "serve pools that have no token configured without one: serves configs, including the bootstrap kubeconfig they embed, to anyone who can reach the port")
	fl.StringVar(&f.pullSecret, "pull-secret", server.DefaultPullSecret, "cluster mode: <namespace>/<name> of the Secret whose .dockerconfigjson is served as /var/lib/kubelet/config.json (empty disables; without the Secret none is served)")
	fl.StringVar(&f.pullSecretFile, "pull-secret-file", "", "bootstrap and from-dir modes: file (a .dockerconfigjson) served as /var/lib/kubelet/config.json (optional)")
	fl.DurationVar(&f.tokenOverlap, "token-overlap", time.Hour, "how long a previous token without an explicit expiry stays valid after the server first sees it")
	fl.StringVar(&f.kubeletCAFile, "kubelet-ca-file", "", "from-dir mode: file served as /etc/kubernetes/kubelet-ca.crt (optional)")
	fl.StringVar(&f.osImageURL, "os-image-url", "", "from-dir mode: OS image for pools whose MachineConfigs set none")
	fl.StringVar(&f.extensionsImage, "base-os-extensions-image", "", "from-dir mode: extensions image for pools whose MachineConfigs set none")
	fl.StringVar(&f.bindAddress, "bind-address", "0.0.0.0", "address to listen on")
	fl.IntVar(&f.securePort, "secure-port", 22623, "HTTPS port (0 disables)")
	fl.IntVar(&f.insecurePort, "insecure-port", 22624, "plain HTTP port (0 disables)")
	fl.StringVar(&f.certFile, "tls-cert-file", "", "serving certificate (PEM); reloaded when it changes")
	fl.StringVar(&f.keyFile, "tls-private-key-file", "", "serving private key (PEM); reloaded when it changes")
	fl.StringVar(&f.metricsAddress, "metrics-bind-address", "127.0.0.1:22625", "host:port for Prometheus /metrics (empty disables)")
	fl.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fl.Float64Var(&f.rateLimit, "rate-limit", server.DefaultRateLimitPerSecond, "requests/s one client address may make to /config/ (sustained; 0 disables); over it, 503 with Retry-After, which Ignition retries. Behind a load balancer that hides client addresses, raise it")
	fl.IntVar(&f.rateLimitBurst, "rate-limit-burst", server.DefaultRateLimitBurst, "requests one client address may make to /config/ at once before --rate-limit applies")
	fl.IntVar(&f.maxConnections, "max-connections", server.DefaultMaxConnections, "open connections per listener (HTTPS and HTTP each); more wait in the accept queue")
	fl.IntVar(&f.maxHeaderBytes, "max-header-bytes", server.DefaultMaxHeaderBytes, "largest request header accepted; larger gets 431")
	fl.StringVar(&f.memoryLimit, "memory-limit", "auto", "soft memory limit of the Go runtime (the collector works harder near it; not a hard cap): a quantity such as 64Mi, none, or auto: $GOMEMLIMIT if set; else in the standalone modes 16Mi plus 40Ki per --max-connections (55Mi at 1,000), in cluster mode none (its MachineConfig cache has no fixed size: give the cache plus 40Ki per connection)")
	return cmd
}

func runServer(ctx context.Context, f serverFlags) error {
	log, err := newLogger(f.logFormat)
	if err != nil {
		return err
	}
	// controller-runtime (informers, certificate watcher) logs through its own global logger.
	ctrllog.SetLogger(logr.FromSlogHandler(log.Handler()))
	source, err := serverSource(f, log)
	if err != nil {
		return err
	}
	if limit, apply, err := server.MemoryLimit(f.memoryLimit, f.maxConnections, f.bootstrapDir == "" && f.fromDir == ""); err != nil {
		return err
	} else if apply {
		debug.SetMemoryLimit(limit)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return server.Run(ctx, source, server.Options{
		Listen: server.ListenOptions{
			SecureAddress:   portAddress(f.bindAddress, f.securePort),
			InsecureAddress: portAddress(f.bindAddress, f.insecurePort),
			CertFile:        f.certFile,
			KeyFile:         f.keyFile,
			MetricsAddress:  f.metricsAddress,
			MaxConnections:  f.maxConnections,
			MaxHeaderBytes:  f.maxHeaderBytes,
		},
		RateLimit:            server.RateLimit{PerSecond: f.rateLimit, Burst: f.rateLimitBurst},
		TokenOverlap:         f.tokenOverlap,
		AllowUnauthenticated: f.allowUnauthenticated,
		Log:                  log,
	})
}

func serverSource(f serverFlags, log *slog.Logger) (server.Source, error) {
	switch {
	case f.bootstrapDir != "" && f.fromDir != "":
		return nil, errors.New("--bootstrap-dir and --from-dir are different modes; give one")
	case f.bootstrapDir != "":
		opts := server.BootstrapOptions{Dir: f.bootstrapDir, KubeconfigFile: f.bootstrapKubeconfig, TokensFile: f.tokensFile, PullSecretFile: f.pullSecretFile}
		return func(ctx context.Context, s *server.Store) error { return server.RunBootstrap(ctx, s, opts, log) }, nil
	case f.fromDir != "":
		opts := server.FromDirOptions{
			Dir: f.fromDir, KubeconfigFile: f.bootstrapKubeconfig, KubeletCAFile: f.kubeletCAFile, TokensFile: f.tokensFile,
			PullSecretFile: f.pullSecretFile,
			Defaults:       render.Defaults{OSImageURL: f.osImageURL, BaseOSExtensionsContainerImage: f.extensionsImage},
		}
		return func(ctx context.Context, s *server.Store) error { return server.RunFromDir(ctx, s, opts, log) }, nil
	}
	if f.tokensFile != "" {
		return nil, errors.New("--tokens-file is for the standalone modes; in cluster mode tokens come from Secrets <pool>-mcs-token")
	}
	if f.pullSecretFile != "" {
		return nil, errors.New("--pull-secret-file is for the standalone modes; in cluster mode the pull secret is the Secret --pull-secret names")
	}
	psNamespace, psName, err := server.ParsePullSecretRef(f.pullSecret)
	if err != nil {
		return nil, fmt.Errorf("--pull-secret: %w", err)
	}
	cfg, err := clientconfig.Load(f.kubeconfig)
	if err != nil {
		return nil, err
	}
	opts := server.ClusterOptions{
		Namespace: f.namespace, APIServerURL: f.apiServerURL, BootstrapTokenSecret: f.bootstrapTokenSecret,
		PullSecret: types.NamespacedName{Namespace: psNamespace, Name: psName},
	}
	return func(ctx context.Context, s *server.Store) error { return server.RunCluster(ctx, cfg, s, opts, log) }, nil
}

func portAddress(host string, port int) string {
	if port == 0 {
		return ""
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

func newLogger(format string) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, nil)), nil
	}
	return nil, fmt.Errorf("--log-format: unknown format %q (want text or json)", format)
}
