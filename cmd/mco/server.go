//go:build !nodeagent

package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mco-dev/mco/internal/metricsauth"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/server"
)

func newServerCommand() *cobra.Command {
	var s server.Settings
	var metricsHost string
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
			var err error
			if s.MetricsAddress, err = metricsauth.WithHost(s.MetricsAddress, metricsHost); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return s.Serve(ctx)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&s.Kubeconfig, "kubeconfig", "", "cluster mode: kubeconfig file (default $KUBECONFIG, else in-cluster, else ~/.kube/config)")
	fl.StringVar(&s.BootstrapDir, "bootstrap-dir", "", "bootstrap mode: serve from this OpenShift bootstrap directory")
	fl.StringVar(&s.BootstrapKubeconfig, "bootstrap-kubeconfig", "", "bootstrap and from-dir modes: file served as /etc/kubernetes/kubeconfig (optional)")
	fl.StringVar(&s.FromDir, "from-dir", "", "from-dir mode: render and serve the MachineConfig and MachineConfigPool manifests in this directory")
	fl.StringVar(&s.Namespace, "namespace", "openshift-machine-config-operator", "cluster mode: namespace of the token Secrets, the bootstrap token Secret and the kubeconfig-data ConfigMap")
	fl.StringVar(&s.APIServerURL, "apiserver-url", "", "cluster mode: API server URL written into served kubeconfigs (default: the URL this server uses)")
	fl.StringVar(&s.BootstrapTokenSecret, "bootstrap-token-secret", server.DefaultBootstrapTokenSecret, "cluster mode: Secret in --namespace with the kubelet bootstrap token (keys token, ca.crt)")
	fl.StringVar(&s.TokensFile, "tokens-file", "", "bootstrap and from-dir modes: YAML map of pool to {token, previousToken, previousTokenExpires}; pools not listed are refused unless --allow-unauthenticated")
	fl.BoolVar(&s.AllowUnauthenticated, "allow-unauthenticated", false, "serve pools that have no token configured without one: serves configs, including the bootstrap kubeconfig they embed, to anyone who can reach the port")
	fl.StringVar(&s.PullSecret, "pull-secret", server.DefaultPullSecret, "cluster mode: <namespace>/<name> of the Secret whose .dockerconfigjson is served as /var/lib/kubelet/config.json (empty disables; without the Secret none is served)")
	fl.StringVar(&s.PullSecretFile, "pull-secret-file", "", "bootstrap and from-dir modes: file (a .dockerconfigjson) served as /var/lib/kubelet/config.json (optional)")
	fl.DurationVar(&s.TokenOverlap, "token-overlap", time.Hour, "how long a previous token without an explicit expiry stays valid after the server first sees it")
	fl.StringVar(&s.KubeletCAFile, "kubelet-ca-file", "", "from-dir mode: file served as /etc/kubernetes/kubelet-ca.crt (optional)")
	fl.StringVar(&s.OSImageURL, "os-image-url", "", "from-dir mode: OS image for pools whose MachineConfigs set none")
	fl.StringVar(&s.ExtensionsImage, "base-os-extensions-image", "", "from-dir mode: extensions image for pools whose MachineConfigs set none")
	fl.StringVar(&s.BindAddress, "bind-address", "0.0.0.0", "address to listen on")
	fl.IntVar(&s.SecurePort, "secure-port", protocol.ServerPort, "HTTPS port (0 disables)")
	fl.IntVar(&s.InsecurePort, "insecure-port", protocol.ServerInsecurePort, "plain HTTP port (0 disables)")
	fl.StringVar(&s.CertFile, "tls-cert-file", "", "serving certificate (PEM); reloaded when it changes")
	fl.StringVar(&s.KeyFile, "tls-private-key-file", "", "serving private key (PEM); reloaded when it changes")
	fl.StringVar(&metricsHost, "metrics-bind-host", "", "listen for metrics on this host (e.g. the node's address, $(NODE_IP) from the downward API) with --metrics-bind-address's port")
	fl.StringVar(&s.MetricsAddress, "metrics-bind-address", "127.0.0.1:22625", "host:port for Prometheus /metrics (empty disables). Plain HTTP on loopback; on any other address (cluster mode only) HTTPS, and only to bearer tokens the API server accepts whose user may get /metrics")
	fl.StringVar(&s.MetricsCertDir, "metrics-cert-dir", "", "directory with tls.crt and tls.key for metrics off loopback, read again when they change (default: a self-signed certificate)")
	fl.StringVar(&s.LogFormat, "log-format", "text", "log format: text or json")
	fl.Float64Var(&s.RateLimit, "rate-limit", server.DefaultRateLimitPerSecond, "requests/s one client address may make to /config/ (sustained; 0 disables); over it, 503 with Retry-After, which Ignition retries. Behind a load balancer that hides client addresses, raise it")
	fl.IntVar(&s.RateLimitBurst, "rate-limit-burst", server.DefaultRateLimitBurst, "requests one client address may make to /config/ at once before --rate-limit applies")
	fl.IntVar(&s.MaxConnections, "max-connections", server.DefaultMaxConnections, "open connections per listener (HTTPS and HTTP each); more wait in the accept queue")
	fl.IntVar(&s.MaxHeaderBytes, "max-header-bytes", server.DefaultMaxHeaderBytes, "largest request header accepted; larger gets 431")
	fl.StringVar(&s.MemoryLimit, "memory-limit", "auto", "soft memory limit of the Go runtime (the collector works harder near it; not a hard cap): a quantity such as 64Mi, none, or auto: $GOMEMLIMIT if set; else in the standalone modes 16Mi plus 40Ki per --max-connections (55Mi at 1,000), in cluster mode none (its MachineConfig cache has no fixed size: give the cache plus 40Ki per connection)")
	return cmd
}
