// Package controller hosts mco's controllers in one controller-runtime manager: the process
// `mco controller` runs, leader-elected so two replicas never act at once.
package controller

import (
	"fmt"
	"net/http"

	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	bootimagecontroller "github.com/mco-dev/mco/internal/controller/bootimage"
	clusteroperatorcontroller "github.com/mco-dev/mco/internal/controller/clusteroperator"
	containerruntimecontroller "github.com/mco-dev/mco/internal/controller/containerruntime"
	draincontroller "github.com/mco-dev/mco/internal/controller/drain"
	kubeletconfigcontroller "github.com/mco-dev/mco/internal/controller/kubeletconfig"
	machineconfignodecontroller "github.com/mco-dev/mco/internal/controller/machineconfignode"
	nodecontroller "github.com/mco-dev/mco/internal/controller/node"
	pinnedimagesetcontroller "github.com/mco-dev/mco/internal/controller/pinnedimageset"
	registriescontroller "github.com/mco-dev/mco/internal/controller/registries"
	rendercontroller "github.com/mco-dev/mco/internal/controller/render"
	servertokencontroller "github.com/mco-dev/mco/internal/controller/servertoken"
	servingcertcontroller "github.com/mco-dev/mco/internal/controller/servingcert"
	unpauseplancontroller "github.com/mco-dev/mco/internal/controller/unpauseplan"
	"github.com/mco-dev/mco/internal/controller/userdata"
	"github.com/mco-dev/mco/internal/metricsauth"
	"github.com/mco-dev/mco/internal/scheme"
)

// Options configure the controller process.
type Options struct {
	MetricsAddr string
	// MetricsCertDir holds tls.crt and tls.key for metrics off loopback (metricsauth.Endpoint).
	MetricsCertDir          string
	ProbeAddr               string
	PprofAddr               string // net/http/pprof; "" (the default) serves none
	LeaderElection          bool
	LeaderElectionNamespace string
	Render                  rendercontroller.Options
	Node                    nodecontroller.Options
	Drain                   draincontroller.Options
	// UserData, when set, enables the pointer-Ignition Secret controllers.
	UserData *userdata.Options
	// ServerTokens, when set, enables the per-pool Machine Config Server token controller
	// (always set by `mco controller`).
	ServerTokens *servertokencontroller.Options
	// BootImages, when set, enables the MachineSet boot image controller.
	BootImages *bootimagecontroller.Options
	// ServingCert, when set, enables the Machine Config Server serving certificate controller.
	ServingCert *servingcertcontroller.Options
	// MetricsCert, when set, enables the same controller for the metrics endpoints'
	// certificate (servingcertcontroller.MetricsObjects).
	MetricsCert *servingcertcontroller.Options
	// ClusterOperator, when set, enables the ClusterOperator machine-config controller where
	// the cluster serves that kind (OpenShift); always set by `mco controller`.
	ClusterOperator *clusteroperatorcontroller.Options
}

// NewManager builds the manager with every controller registered; Start runs them.
func NewManager(cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	// One REST mapper for the manager and for asking, before its cache is configured, whether
	// this cluster serves MachineSets at all.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating controller manager: %w", err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating controller manager: %w", err)
	}
	var kinds servedKinds
	if opts.BootImages != nil {
		if kinds.machineSets, err = scheme.Serves(mapper, machinev1beta1.GroupVersion.WithKind("MachineSet")); err != nil {
			return nil, fmt.Errorf("creating controller manager: %w", err)
		}
	}
	// Plain Kubernetes has no ClusterOperator kind: the controller is then not started and
	// nothing watches it.
	if opts.ClusterOperator != nil {
		if kinds.clusterOperators, err = clusteroperatorcontroller.Served(mapper); err != nil {
			return nil, fmt.Errorf("creating controller manager: %w", err)
		}
	}
	// Where the cluster serves APIServers (OpenShift), generated kubelet configurations follow
	// the TLS profile of APIServer cluster; elsewhere nothing watches the kind.
	if kinds.apiServers, err = scheme.Serves(mapper, configv1.GroupVersion.WithKind("APIServer")); err != nil {
		return nil, fmt.Errorf("creating controller manager: %w", err)
	}
	// Pacing policies are mco's own CRD; a cluster without it (installed by other means) rolls
	// out by maxUnavailable alone, and nothing caches pods.
	if kinds.rollouts, err = scheme.Serves(mapper, rolloutv1.GroupVersion.WithKind("MachineConfigPoolRollout")); err != nil {
		return nil, fmt.Errorf("creating controller manager: %w", err)
	}
	opts.Node.Pacing = kinds.rollouts
	metrics, selfSigned, err := metricsOptions(metricsauth.Endpoint{Address: opts.MetricsAddr, CertDir: opts.MetricsCertDir})
	if err != nil {
		return nil, fmt.Errorf("creating controller manager: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		MapperProvider:          func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return mapper, nil },
		Scheme:                  scheme.Scheme,
		Metrics:                 metrics,
		HealthProbeBindAddress:  opts.ProbeAddr,
		PprofBindAddress:        opts.PprofAddr,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        "mco-controller",
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
		// The process ends when the manager does (mco controller returns Start's error), so
		// the lease can be handed back on the way out: a rolling update of the Deployment, or
		// the bootstrap controller's end, passes control at once instead of after the lease's
		// 15 s expiry, with no time when two act.
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cacheOptions(opts, kinds),
	})
	if err != nil {
		return nil, fmt.Errorf("creating controller manager: %w", err)
	}
	if selfSigned {
		mgr.GetLogger().Info("metrics are served with a self-signed certificate no scraper can verify: give --metrics-cert-dir", "address", opts.MetricsAddr)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	render := &rendercontroller.Reconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorderFor("mco-render-controller"),
		Options:  opts.Render,
	}
	if err := render.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("render controller: %w", err)
	}
	if err := setupRollout(mgr, opts.Node, opts.Drain); err != nil {
		return nil, err
	}
	if err := (&unpauseplancontroller.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("unpause plan controller: %w", err)
	}
	pis := &pinnedimagesetcontroller.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("mco-pinnedimageset-controller")}
	if err := pis.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("pinnedimageset controller: %w", err)
	}
	mcn := &machineconfignodecontroller.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("mco-machineconfignode-controller")}
	if err := mcn.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("machineconfignode controller: %w", err)
	}
	// The kubelet config controller parses the same MachineConfigs as the render: one cache.
	kubelet := &kubeletconfigcontroller.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorderFor("mco-kubeletconfig-controller"),
		Parses:   render.Parses,
		Options:  kubeletconfigcontroller.Options{ControllerVersion: opts.Render.ControllerVersion, ServesAPIServer: kinds.apiServers}}
	if err := kubelet.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("kubelet config controller: %w", err)
	}
	if err := setupContainerRuntime(mgr, opts.Render.ControllerVersion); err != nil {
		return nil, err
	}
	if opts.UserData != nil {
		if err := setupUserData(mgr, *opts.UserData); err != nil {
			return nil, err
		}
	}
	if opts.ServerTokens != nil {
		tokens := &servertokencontroller.Reconciler{
			Client:   mgr.GetClient(),
			Recorder: mgr.GetEventRecorderFor("mco-servertoken-controller"),
			Options:  *opts.ServerTokens,
		}
		if err := tokens.SetupWithManager(mgr); err != nil {
			return nil, fmt.Errorf("server token controller: %w", err)
		}
	}
	if opts.ServingCert != nil {
		if err := setupServingCert(mgr, *opts.ServingCert); err != nil {
			return nil, err
		}
	}
	if opts.MetricsCert != nil {
		if err := setupServingCert(mgr, *opts.MetricsCert); err != nil {
			return nil, err
		}
	}
	if opts.BootImages != nil {
		bootImages := &bootimagecontroller.Reconciler{
			Client:   mgr.GetClient(),
			Recorder: mgr.GetEventRecorderFor("mco-bootimage-controller"),
			Options:  *opts.BootImages,
		}
		if err := bootImages.SetupWithManager(mgr); err != nil {
			return nil, fmt.Errorf("boot image controller: %w", err)
		}
	}
	if opts.ClusterOperator != nil {
		if err := setupClusterOperator(mgr, *opts.ClusterOperator, opts.Render.ControllerVersion, kinds.clusterOperators); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}

// setupContainerRuntime starts the ContainerRuntimeConfig and registries controllers, which
// generate 99-<pool>-generated-containerruntime and 99-<pool>-generated-registries.
func setupContainerRuntime(mgr ctrl.Manager, version string) error {
	crc := &containerruntimecontroller.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorderFor("mco-containerruntimeconfig-controller"), Options: containerruntimecontroller.Options{ControllerVersion: version}}
	if err := crc.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("containerruntimeconfig controller: %w", err)
	}
	reg := &registriescontroller.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorderFor("mco-registries-controller"), Options: registriescontroller.Options{ControllerVersion: version}}
	if err := reg.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("registries controller: %w", err)
	}
	return nil
}

// setupClusterOperator starts the ClusterOperator controller where the kind is served. Its
// upgrade rule compares rendered configs' generated-by-controller-version with the render
// controller's own, so it is given that.
func setupClusterOperator(mgr ctrl.Manager, opts clusteroperatorcontroller.Options, renderVersion string, served bool) error {
	if !served {
		mgr.GetLogger().Info("ClusterOperators are not served by this cluster; ClusterOperator controller not started")
		return nil
	}
	opts.ControllerVersion = renderVersion
	r := &clusteroperatorcontroller.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("mco-clusteroperator-controller"), Options: opts}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("ClusterOperator controller: %w", err)
	}
	return nil
}

func setupUserData(mgr ctrl.Manager, opts userdata.Options) error {
	recorder := mgr.GetEventRecorderFor("mco-userdata-controller")
	if err := (&userdata.ManagedReconciler{Client: mgr.GetClient(), Recorder: recorder, Options: opts}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("user-data controller: %w", err)
	}
	if err := (&userdata.InstallerReconciler{Client: mgr.GetClient(), Recorder: recorder, Options: opts}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("installer user-data controller: %w", err)
	}
	return nil
}

func setupServingCert(mgr ctrl.Manager, opts servingcertcontroller.Options) error {
	name := "servingcert"
	if opts.Objects.Controller != "" {
		name = opts.Objects.Controller
	}
	r := &servingcertcontroller.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("mco-" + name + "-controller"), Options: opts}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("%s controller: %w", name, err)
	}
	return nil
}

// servedKinds are the optional kinds this cluster serves. The cache cannot be configured for a
// kind it cannot map, so each is configured only where served.
type servedKinds struct {
	machineSets, clusterOperators, apiServers, rollouts bool
}

// cacheOptions keeps Secrets and ConfigMaps out of the cache except in the namespaces the
// controllers read them from, MachineSets except in the Machine API namespace, and the
// ClusterOperators and APIServers to the one object each controller reads (machine-config,
// cluster): caching every Secret or MachineSet of a cluster costs memory and needs
// cluster-wide RBAC the controller should not have, and an informer on one name lets the RBAC
// name it. Every cached object is kept without its managedFields, Nodes also without what only
// the kubelet reads (nodecontroller.NodeCache).
func cacheOptions(opts Options, kinds servedKinds) cache.Options {
	namespaces := map[string]cache.Config{}
	if ud := opts.UserData; ud != nil {
		for _, ns := range []string{ud.MachineAPINamespace, ud.ServerNamespace, ud.CA.Namespace} {
			namespaces[ns] = cache.Config{}
		}
	}
	if st := opts.ServerTokens; st != nil {
		namespaces[st.Namespace] = cache.Config{}
	}
	if bi := opts.BootImages; bi != nil {
		// coreos-bootimages and the patch history; the MachineSets' user-data Secrets.
		namespaces[bi.BootImagesNamespace] = cache.Config{}
		namespaces[bi.MachineAPINamespace] = cache.Config{}
	}
	for _, sc := range []*servingcertcontroller.Options{opts.ServingCert, opts.MetricsCert} {
		if sc != nil {
			// The CA Secret, the serving Secret and the bundle ConfigMap.
			namespaces[sc.Namespace] = cache.Config{}
		}
	}
	byObject := map[client.Object]cache.ByObject{}
	if len(namespaces) > 0 {
		byObject[&corev1.Secret{}] = cache.ByObject{Namespaces: namespaces}
		byObject[&corev1.ConfigMap{}] = cache.ByObject{Namespaces: namespaces}
	}
	if bi := opts.BootImages; bi != nil && kinds.machineSets {
		// The boot image controller's only MachineSets (its watch and its List) are these.
		byObject[&machinev1beta1.MachineSet{}] = cache.ByObject{Namespaces: map[string]cache.Config{bi.MachineAPINamespace: {}}}
	}
	if opts.ClusterOperator != nil && kinds.clusterOperators {
		obj, by := clusteroperatorcontroller.CacheByObject()
		byObject[obj] = by
	}
	if kinds.apiServers {
		obj, by := kubeletconfigcontroller.CacheByObject()
		byObject[obj] = by
	}
	if kinds.rollouts {
		obj, by := nodecontroller.PodCache()
		byObject[obj] = by
	}
	obj, by := nodecontroller.NodeCache()
	byObject[obj] = by
	obj, by = machineconfignodecontroller.CacheByObject()
	byObject[obj] = by
	// No controller reads managedFields, and they are a large part of every cached object (one
	// entry per writer, each listing every field it set); a write from a cached object never
	// carries them, so the API server keeps what it has.
	return cache.Options{ByObject: byObject, DefaultTransform: cache.TransformStripManagedFields()}
}
