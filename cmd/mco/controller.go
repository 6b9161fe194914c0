//go:build !nodeagent && !mcoserver

package main

import (
	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/mco-dev/mco/internal/clientconfig"
	"github.com/mco-dev/mco/internal/controller"
	"github.com/mco-dev/mco/internal/controller/drain"
	rendercontroller "github.com/mco-dev/mco/internal/controller/render"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/internal/servertoken"
	"github.com/mco-dev/mco/internal/servingcert"
)

func newControllerCommand() *cobra.Command {
	var kubeconfig string
	// What no flag sets (the serving certificate's renewal fraction) keeps its default.
	s := controller.Settings{CertPolicy: servingcert.DefaultPolicy()}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the controllers: render pools, roll configs onto nodes, drain, boot images, user data",
		Long: `Run mco's controllers in one leader-elected process.

The render controller merges each MachineConfigPool's MachineConfigs into one rendered
MachineConfig (rendered-<pool>-<hash>), points the pool's spec.configuration at it, reports
RenderDegraded when a MachineConfig is invalid, and deletes old rendered configs that no pool
or node references any more (keeping the newest --rendered-configs-to-keep per pool). A burst
of changes to a pool's inputs (kubectl apply -f dir/) is rendered once: when its
MachineConfigs, KubeletConfigs and ContainerRuntimeConfigs have been quiet for --render-settle,
and at the latest --render-settle-max after the burst's first change.

The server token controller keeps a bearer token Secret <pool>-mcs-token per pool in
--server-namespace (labelled machineconfiguration.openshift.io/mcs-token, owned by the pool):
a random 256-bit token, rotated --server-token-overlap before --server-token-lifetime ends,
the rotated-out one kept as previous-token until previous-token-expires; the Secret is deleted
with its pool. The server refuses a pool's configs without its token. A token Secret without
the label is the admin's: it is used as it is, never rotated or deleted.

With --server-host set, the user-data controllers keep a pointer-Ignition Secret
<pool>-user-data-managed per pool in --machine-api-namespace (merge source
https://<server-host>/config/<pool>, the --server-ca bundle, the pool's bearer token from
Secret <pool>-mcs-token in --server-namespace; a pool's pointer config is written only once
its token exists), and rotate the CA of installer-made user-data Secrets that pin exactly one
CA.

With --server-cert-names, or else the host of --server-host, the serving certificate
controller keeps the Machine Config Server's TLS in --server-namespace, every object labelled
machineconfiguration.openshift.io/managed-serving-certificate: Secret
machine-config-server-ca-key (the CA with its key; only this controller reads it), Secret
machine-config-server-tls (kubernetes.io/tls: tls.crt the certificate and its CA, tls.key,
ca.crt the bundle; what mco server serves) and ConfigMap machine-config-server-ca (key
ca-bundle.crt, the bundle the default --server-ca reads). ECDSA P-256 keys. The certificate
(--server-cert-validity) is issued again when the names change, when it is not signed by the
current CA, and after 80% of its life. The CA (--server-ca-validity) is rotated after 80% of
its life: the new CA joins the bundle first and signs the certificate only once the bundle has
held it for --server-ca-overlap (machines made from older pointer configs trust only the old
CA); an old CA leaves the bundle when it expires. If any of the three exists without the label
(an admin's certificate, e.g. written by cert-manager), the controller touches none of them:
point --server-ca at that certificate's CA (e.g.
secret:openshift-machine-config-operator/machine-config-server-tls:ca.crt). Off with
--manage-server-cert=false, or with neither flag set.

With --boot-images (the default), the boot image controller keeps the MachineSets of
--machine-api-namespace that MachineConfiguration cluster enrolls booting the images ConfigMap
coreos-bootimages in --bootimages-namespace publishes, and upgrades their spec 2 pointer
Ignition stubs to spec 3.

On OpenShift (where the cluster serves the ClusterOperator kind; checked at start), the
ClusterOperator controller keeps clusteroperator/machine-config: Available, Progressing while a
pool rolls out or an upgrade is under way, Degraded naming each degraded pool, Upgradeable,
relatedObjects (--server-namespace first) and the operator version, which a new mco reports
only once the master pool (every pool labelled required-for-upgrade) is Updated on a config it
rendered.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(zap.New())
			cfg, err := clientconfig.Load(kubeconfig)
			if err != nil {
				return err
			}
			opts, err := s.Resolve()
			if err != nil {
				return err
			}
			return controller.Run(ctrl.SetupSignalHandler(), cfg, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	f.StringVar(&s.Options.MetricsAddr, "metrics-bind-address", ":9191", "address of the Prometheus metrics endpoint; 0 disables. Plain HTTP on loopback; on any other address HTTPS, and only to bearer tokens the API server accepts whose user may get /metrics")
	f.StringVar(&s.Options.MetricsCertDir, "metrics-cert-dir", "", "directory with tls.crt and tls.key for metrics off loopback, read again when they change (default: a self-signed certificate)")
	f.BoolVar(&s.ManageMetricsCert, "manage-metrics-cert", true, "create and rotate the metrics endpoints' CA (ConfigMap mco-metrics-ca) and certificate (Secret mco-metrics-tls, for name mco-metrics.<server-namespace>.svc) in --server-namespace")
	f.StringVar(&s.Options.ProbeAddr, "health-probe-bind-address", ":9192", "address of /healthz and /readyz; 0 disables")
	f.StringVar(&s.Options.PprofAddr, "pprof-bind-address", "", "address of Go's /debug/pprof profiles (CPU, heap); empty disables")
	f.BoolVar(&s.Options.LeaderElection, "leader-elect", false, "elect a leader so that only one replica acts")
	f.StringVar(&s.Options.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader-election lease (default: the pod's)")
	f.StringVar(&s.Options.Render.Defaults.OSImageURL, "os-image-url", "", "OS image of pools no MachineConfig overrides")
	f.StringVar(&s.Options.Render.Defaults.BaseOSExtensionsContainerImage, "base-os-extensions-image", "", "extensions image of pools no MachineConfig overrides")
	f.IntVar(&s.Options.Render.KeepRendered, "rendered-configs-to-keep", 5, "rendered configs kept per pool beyond those still referenced")
	f.DurationVar(&s.Options.Render.Settle.Quiet, "render-settle", rendercontroller.DefaultSettleQuiet, "render a pool once its MachineConfigs, KubeletConfigs and ContainerRuntimeConfigs have not changed for this long, so a burst of changes gives one rendered config (0: render at once)")
	f.DurationVar(&s.Options.Render.Settle.Max, "render-settle-max", rendercontroller.DefaultSettleMax, "render a pool at the latest this long after the first change of a burst, however long the changes go on")
	f.StringVar(&s.UserData.ServerHost, "server-host", "", "host[:port] machines reach the Machine Config Server at (port default 22623); enables the user-data controllers and, without --server-cert-names, names the serving certificate")
	f.BoolVar(&s.ManageServerCert, "manage-server-cert", true, "create and rotate the Machine Config Server's serving certificate and CA (Secret machine-config-server-tls) when it has names; a Secret without the managed label is left alone either way")
	f.StringSliceVar(&s.ServerCertNames, "server-cert-names", nil, "DNS names and IP addresses of the Machine Config Server's serving certificate, comma-separated (default: the host of --server-host)")
	f.DurationVar(&s.CertPolicy.ServingValidity, "server-cert-validity", servingcert.DefaultServingValidity, "lifetime of a new serving certificate; renewed after 80% of it")
	f.DurationVar(&s.CertPolicy.CAValidity, "server-ca-validity", servingcert.DefaultCAValidity, "lifetime of a new serving CA; rotated after 80% of it")
	f.DurationVar(&s.CertPolicy.Overlap, "server-ca-overlap", servingcert.DefaultOverlap, "how long the published CA bundle holds a new CA before it signs the serving certificate")
	f.StringVar(&s.ServerCA, "server-ca", "configmap:openshift-machine-config-operator/machine-config-server-ca", "where the server CA bundle is: configmap:NS/NAME[:KEY] or secret:NS/NAME[:KEY]")
	f.StringVar(&s.UserData.MachineAPINamespace, "machine-api-namespace", "openshift-machine-api", "namespace of the user-data Secrets and MachineSets")
	f.StringVar(&s.UserData.ServerNamespace, "server-namespace", "openshift-machine-config-operator", "namespace of the server's per-pool token Secrets <pool>-mcs-token, which the token controller creates, rotates and deletes")
	f.DurationVar(&s.TokenPolicy.Lifetime, "server-token-lifetime", servertoken.DefaultLifetime, "how long a pool's server token is accepted in all: it is rotated --server-token-overlap before this ends")
	f.DurationVar(&s.TokenPolicy.Overlap, "server-token-overlap", servertoken.DefaultOverlap, "how long a rotated-out server token keeps working (previous-token-expires); must cover the time from a cloud machine's creation with old user data to its first config fetch")
	f.StringVar(&s.UserDataSpecVersion, "user-data-spec-version", "3.4.0", "Ignition spec of generated pointer configs (3.1.0 or newer)")
	f.DurationVar(&s.Options.Node.StallThreshold, "update-stall-threshold", rollout.DefaultStallThreshold, "how long a Ready node may take to finish moving to the config it was given before its pool reports it (UpdateStalled, with what its agent last said)")
	f.DurationVar(&s.Options.Node.NotReadyThreshold, "node-not-ready-threshold", rollout.DefaultNotReadyThreshold, "how long a node may stay NotReady during an update before its pool reports it (NodeUnresponsive) and starts no further nodes")
	f.DurationVar(&s.Options.Drain.BlockedThreshold, "drain-blocked-threshold", drain.DefaultBlockedThreshold, "how long a drain may run before the node and its pool report it blocked")
	f.BoolVar(&s.BootImages, "boot-images", true, "run the MachineSet boot image controller")
	f.StringVar(&s.BootImage.BootImagesNamespace, "bootimages-namespace", "openshift-machine-config-operator", "namespace of ConfigMap coreos-bootimages")
	f.StringVar(&s.BootImage.DefaultArchitecture, "default-architecture", "amd64", "architecture (kubernetes.io/arch) of MachineSets whose autoscaler labels annotation names none")
	f.BoolVar(&s.BootImage.UseManagedUserData, "bootimages-use-managed-user-data", false, "point enrolled MachineSets at <role>-user-data-managed instead of upgrading their own spec 2 stubs")
	return cmd
}
