package controller

import (
	"crypto/tls"
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/mco-dev/mco/internal/metricsauth"
)

// metricsOptions serve the controller's metrics at e as every mco metrics endpoint is served
// (metricsauth): plain HTTP on loopback; anywhere else HTTPS, each request's token reviewed
// (TokenReview, then SubjectAccessReview on get /metrics) by controller-runtime's metrics
// server through its FilterProvider hook.
//
// The filter is metricsauth's Reviewer, not controller-runtime's
// filters.WithAuthenticationAndAuthorization, which does the same with k8s.io/apiserver's
// delegating authenticator and authorizer: that module brings cel-go, OpenTelemetry's
// exporters and gRPC into the image's mco (and a genproto module conflict into go.mod) for
// two API calls; one Reviewer for all three components also means one behaviour to test.
//
// The certificate is metricsauth's reloader, not controller-runtime's CertDir: the certwatcher
// behind CertDir needs the files at start and otherwise serves a self-signed certificate until
// a restart, while the controller's pod starts before the controller has issued its own
// certificate (the Secret is mounted optionally and filled in by the kubelet later).
func metricsOptions(e metricsauth.Endpoint) (opts metricsserver.Options, selfSigned bool, err error) {
	opts = metricsserver.Options{BindAddress: e.Address}
	if !e.Served() {
		opts.BindAddress = "0"
		return opts, false, nil
	}
	secure, err := e.Secure()
	if err != nil || !secure {
		return opts, false, err
	}
	cfg, selfSigned, err := e.TLSConfig()
	if err != nil {
		return opts, false, err
	}
	getCertificate := cfg.GetCertificate
	if getCertificate == nil {
		pair := &cfg.Certificates[0]
		getCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return pair, nil }
	}
	opts.SecureServing = true
	opts.FilterProvider = func(cfg *rest.Config, _ *http.Client) (metricsserver.Filter, error) {
		reviewer, err := metricsauth.NewReviewer(cfg)
		if err != nil {
			return nil, err
		}
		return func(_ logr.Logger, h http.Handler) (http.Handler, error) { return reviewer.Protect(h), nil }, nil
	}
	opts.TLSOpts = []func(*tls.Config){func(c *tls.Config) {
		c.MinVersion = tls.VersionTLS12
		c.GetCertificate = getCertificate
		// HTTP/1.1 only, as the server's listeners: HTTP/2's stream handling is attack surface
		// (rapid reset) a scrape does not need.
		c.NextProtos = []string{"http/1.1"}
	}}
	return opts, selfSigned, nil
}
