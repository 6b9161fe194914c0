package controller

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/mco-dev/mco/internal/bootimage"
	bootimagecontroller "github.com/mco-dev/mco/internal/controller/bootimage"
	clusteroperatorcontroller "github.com/mco-dev/mco/internal/controller/clusteroperator"
	servertokencontroller "github.com/mco-dev/mco/internal/controller/servertoken"
	servingcertcontroller "github.com/mco-dev/mco/internal/controller/servingcert"
	"github.com/mco-dev/mco/internal/controller/userdata"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/servertoken"
	"github.com/mco-dev/mco/internal/servingcert"
	"github.com/mco-dev/mco/internal/version"
)

// Settings are `mco controller`'s flags as given: the Options a flag sets as they are, and the
// rest in the form the flags take (a CA source, a spec version, switches and policies), which
// Resolve checks and turns into the controllers' options.
type Settings struct {
	Options Options
	// UserData's ServerHost turns the user-data controllers on; its namespaces are every
	// controller's that needs them.
	UserData userdata.Options
	// ServerCA is where the server CA bundle is: configmap:NS/NAME[:KEY] or secret:NS/NAME[:KEY].
	ServerCA            string
	UserDataSpecVersion string
	BootImages          bool
	BootImage           bootimagecontroller.Options
	TokenPolicy         servertoken.Policy
	ManageServerCert    bool
	// ServerCertNames name the serving certificate; none means the host of UserData.ServerHost.
	ServerCertNames []string
	CertPolicy      servingcert.Policy
	// ManageMetricsCert keeps the metrics endpoints' CA and certificate (the same policy
	// defaults as the server's, named MetricsServerName).
	ManageMetricsCert bool
}

// Resolve checks s and returns the Options NewManager takes: the controllers s turns on, with
// this build's version. Each error names the flag to fix.
func (s Settings) Resolve() (Options, error) {
	opts := s.Options
	if opts.Render.Settle.Quiet < 0 || opts.Render.Settle.Max < 0 {
		return opts, fmt.Errorf("--render-settle and --render-settle-max must not be negative (got %s and %s)", opts.Render.Settle.Quiet, opts.Render.Settle.Max)
	}
	opts.Render.ControllerVersion = version.Get().Commit
	ud := s.UserData
	opts.ClusterOperator = &clusteroperatorcontroller.Options{Namespace: ud.ServerNamespace, Version: version.Get().Version}
	if err := s.TokenPolicy.Validate(); err != nil {
		return opts, fmt.Errorf("--server-token-lifetime/--server-token-overlap: %w", err)
	}
	opts.ServerTokens = &servertokencontroller.Options{Namespace: ud.ServerNamespace, Policy: s.TokenPolicy}
	if s.ManageServerCert {
		var err error
		if opts.ServingCert, err = servingCertOptions(s.ServerCertNames, ud.ServerHost, ud.ServerNamespace, s.CertPolicy); err != nil {
			return opts, err
		}
	}
	if ud.ServerHost != "" {
		var err error
		if ud.CA, err = userdata.ParseCASource(s.ServerCA); err != nil {
			return opts, fmt.Errorf("--server-ca: %w", err)
		}
		if ud.SpecVersion, err = ignition.ParseLooseVersion(s.UserDataSpecVersion); err != nil {
			return opts, fmt.Errorf("--user-data-spec-version: %w", err)
		}
		opts.UserData = &ud
	}
	if s.ManageMetricsCert {
		names, err := servingcert.ParseNames([]string{servingcertcontroller.MetricsServerName(ud.ServerNamespace)})
		if err != nil {
			return opts, fmt.Errorf("--server-namespace %q as the metrics certificate's name: %w", ud.ServerNamespace, err)
		}
		opts.MetricsCert = &servingcertcontroller.Options{Namespace: ud.ServerNamespace, Objects: servingcertcontroller.MetricsObjects,
			Names: names, Policy: servingcert.DefaultPolicy()}
	}
	if s.BootImages {
		bi := s.BootImage
		if _, ok := bootimage.StreamArchitecture(bi.DefaultArchitecture); !ok {
			return opts, fmt.Errorf("--default-architecture %q: want amd64, arm64, s390x or ppc64le", bi.DefaultArchitecture)
		}
		bi.MachineAPINamespace = ud.MachineAPINamespace
		bi.StubSpecVersion = bootimage.StubSpecVersion
		opts.BootImages = &bi
	}
	return opts, nil
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

// Run runs every controller opts turns on against the cluster cfg reaches, until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	if cfg.QPS == 0 {
		// client-go's default of 5 requests/s would make a 1,000-node rollout take minutes;
		// leave throttling to the API server's priority and fairness.
		cfg.QPS = -1
	}
	mgr, err := NewManager(cfg, opts)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}
