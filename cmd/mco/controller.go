//go:build !nodeagent && !mcoserver

package main

import (
	"fmt"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/mco-dev/mco/internal/bootimage"
	"github.com/mco-dev/mco/internal/clientconfig"
	"github.com/mco-dev/mco/internal/controller"
	bootimagecontroller "github.com/mco-dev/mco/internal/controller/bootimage"
	clusteroperatorcontroller "github.com/mco-dev/mco/internal/controller/clusteroperator"
	"github.com/mco-dev/mco/internal/controller/drain"
	rendercontroller "github.com/mco-dev/mco/internal/controller/render"
	servertokencontroller "github.com/mco-dev/mco/internal/controller/servertoken"
	servingcertcontroller "github.com/mco-dev/mco/internal/controller/servingcert"
	"github.com/mco-dev/mco/internal/controller/userdata"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/internal/servertoken"
	"github.com/mco-dev/mco/internal/servingcert"
	"github.com/mco-dev/mco/internal/version"
)

func newControllerCommand() *cobra.Command {
	var kubeconfig, caSource, userDataSpec string
	opts := controller.Options{}
	ud := userdata.Options{}
	bootImages, bi := true, bootimagecontroller.Options{}
	var tokenPolicy servertoken.Policy
	manageServerCert, serverCertNames, certPolicy := true, []string(nil), servingcert.DefaultPolicy()
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
			if cfg.QPS == 0 {
				// client-go's default of 5 requests/s would make a 1,000-node rollout take
				// minutes; leave throttling to the API server's priority and fairness.
				cfg.QPS = -1
			}
			if opts.Render.Settle.Quiet < 0 || opts.Render.Settle.Max < 0 {
				return fmt.Errorf("--render-settle and --render-settle-max must not be negative (got %s and %s)", opts.Render.Settle.Quiet, opts.Render.Settle.Max)
			}
			opts.Render.ControllerVersion = version.Get().Commit
			opts.ClusterOperator = &clusteroperatorcontroller.Options{Namespace: ud.ServerNamespace, Version: version.Get().Version}
			if err := tokenPolicy.Validate(); err != nil {
				return fmt.Errorf("--server-token-lifetime/--server-token-overlap: %w", err)
			}
			opts.ServerTokens = &servertokencontroller.Options{Namespace: ud.ServerNamespace, Policy: tokenPolicy}
			if manageServerCert {
				if opts.ServingCert, err = servingCertOptions(serverCertNames, ud.ServerHost, ud.ServerNamespace, certPolicy); err != nil {
					return err
				}
			}
			if ud.ServerHost != "" {
				if ud.CA, err = userdata.ParseCASource(caSource); err != nil {
					return fmt.Errorf("--server-ca: %w", err)
				}
				if ud.SpecVersion, err = ignition.ParseLooseVersion(userDataSpec); err != nil {
					return fmt.Errorf("--user-data-spec-version: %w", err)
				}
				opts.UserData = &ud
			}
			if bootImages {
				if _, ok := bootimage.StreamArchitecture(bi.DefaultArchitecture); !ok {
					return fmt.Errorf("--default-architecture %q: want amd64, arm64, s390x or ppc64le", bi.DefaultArchitecture)
				}
				bi.MachineAPINamespace = ud.MachineAPINamespace
				bi.StubSpecVersion = bootimage.StubSpecVersion
				opts.BootImages = &bi
			}
			mgr, err := controller.NewManager(cfg, opts)
			if err != nil {
				return err
			}
			return mgr.Start(ctrl.SetupSignalHandler())
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	f.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":9191", "address of the Prometheus metrics endpoint; 0 disables")
	f.StringVar(&opts.ProbeAddr, "health-probe-bind-address", ":9192", "address of /healthz and /readyz; 0 disables")
	f.StringVar(&opts.PprofAddr, "pprof-bind-address", "", "address of Go's /debug/pprof profiles (CPU, heap); empty disables")
	f.BoolVar(&opts.LeaderElection, "leader-elect", false, "elect a leader so that only one replica acts")
	f.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader-election lease (default: the pod's)")
	f.StringVar(&opts.Render.Defaults.OSImageURL, "os-image-url", "", "OS image of pools no MachineConfig overrides")
	f.StringVar(&opts.Render.Defaults.BaseOSExtensionsContainerImage, "base-os-extensions-image", "", "extensions image of pools no MachineConfig overrides")
	f.IntVar(&opts.Render.KeepRendered, "rendered-configs-to-keep", 5, "rendered configs kept per pool beyond those still referenced")
	f.DurationVar(&opts.Render.Settle.Quiet, "render-settle", rendercontroller.DefaultSettleQuiet, "render a pool once its MachineConfigs, KubeletConfigs and ContainerRuntimeConfigs have not changed for this long, so a burst of changes gives one rendered config (0: render at once)")
	f.DurationVar(&opts.Render.Settle.Max, "render-settle-max", rendercontroller.DefaultSettleMax, "render a pool at the latest this long after the first change of a burst, however long the changes go on")
	f.StringVar(&ud.ServerHost, "server-host", "", "host[:port] machines reach the Machine Config Server at (port default 22623); enables the user-data controllers and, without --server-cert-names, names the serving certificate")
	f.BoolVar(&manageServerCert, "manage-server-cert", true, "create and rotate the Machine Config Server's serving certificate and CA (Secret machine-config-server-tls) when it has names; a Secret without the managed label is left alone either way")
	f.StringSliceVar(&serverCertNames, "server-cert-names", nil, "DNS names and IP addresses of the Machine Config Server's serving certificate, comma-separated (default: the host of --server-host)")
	f.DurationVar(&certPolicy.ServingValidity, "server-cert-validity", servingcert.DefaultServingValidity, "lifetime of a new serving certificate; renewed after 80% of it")
	f.DurationVar(&certPolicy.CAValidity, "server-ca-validity", servingcert.DefaultCAValidity, "lifetime of a new serving CA; rotated after 80% of it")
	f.DurationVar(&certPolicy.Overlap, "server-ca-overlap", servingcert.DefaultOverlap, "how long the published CA bundle holds a new CA before it signs the serving certificate")
	f.StringVar(&caSource, "server-ca", "configmap:openshift-machine-config-operator/machine-config-server-ca", "where the server CA bundle is: configmap:NS/NAME[:KEY] or secret:NS/NAME[:KEY]")
	f.StringVar(&ud.MachineAPINamespace, "machine-api-namespace", "openshift-machine-api", "namespace of the user-data Secrets and MachineSets")
	f.StringVar(&ud.ServerNamespace, "server-namespace", "openshift-machine-config-operator", "namespace of the server's per-pool token Secrets <pool>-mcs-token, which the token controller creates, rotates and deletes")
	f.DurationVar(&tokenPolicy.Lifetime, "server-token-lifetime", servertoken.DefaultLifetime, "how long a pool's server token is accepted in all: it is rotated --server-token-overlap before this ends")
	f.DurationVar(&tokenPolicy.Overlap, "server-token-overlap", servertoken.DefaultOverlap, "how long a rotated-out server token keeps working (previous-token-expires); must cover the time from a cloud machine's creation with old user data to its first config fetch")
	f.StringVar(&userDataSpec, "user-data-spec-version", "3.4.0", "Ignition spec of generated pointer configs (3.1.0 or newer)")
	f.DurationVar(&opts.Node.NotReadyThreshold, "node-not-ready-threshold", rollout.DefaultNotReadyThreshold, "how long a node may stay NotReady during an update before its pool reports it (NodeUnresponsive) and starts no further nodes")
	f.DurationVar(&opts.Drain.BlockedThreshold, "drain-blocked-threshold", drain.DefaultBlockedThreshold, "how long a drain may run before the node and its pool report it blocked")
	f.BoolVar(&bootImages, "boot-images", true, "run the MachineSet boot image controller")
	f.StringVar(&bi.BootImagesNamespace, "bootimages-namespace", "openshift-machine-config-operator", "namespace of ConfigMap coreos-bootimages")
	f.StringVar(&bi.DefaultArchitecture, "default-architecture", "amd64", "architecture (kubernetes.io/arch) of MachineSets whose autoscaler labels annotation names none")
	f.BoolVar(&bi.UseManagedUserData, "bootimages-use-managed-user-data", false, "point enrolled MachineSets at <role>-user-data-managed instead of upgrading their own spec 2 stubs")
	return cmd
}

// servingCertOptions enables the serving certificate controller when it has names: from
// --server-cert-names, else the host of --server-host; nil with neither.
func servingCertOptions(list []string, serverHost, namespace string, policy servingcert.Policy) (*servingcertcontroller.Options, error) {
	names, err := servingcert.NamesFor(list, serverHost)
	if err != nil {
		if len(list) == 0 {
			return nil, fmt.Errorf("--server-host %q as the serving certificate's name: %w", serverHost, err)
		}
		return nil, fmt.Errorf("--server-cert-names: %w", err)
	}
	if names.Empty() {
		return nil, nil
	}
	if err := policy.Validate(); err != nil {
		return nil, fmt.Errorf("--server-cert-validity/--server-ca-validity/--server-ca-overlap: %w", err)
	}
	return &servingcertcontroller.Options{Namespace: namespace, Names: names, Policy: policy}, nil
}
