package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/net/netutil"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"

	"github.com/mco-dev/mco/internal/metricsauth"
)

// ListenOptions say where to listen. An empty address disables that listener.
type ListenOptions struct {
	// SecureAddress serves HTTPS with CertFile/KeyFile, reloaded when the files change.
	SecureAddress     string
	CertFile, KeyFile string
	// InsecureAddress serves plain HTTP, for clients that cannot be given a CA.
	InsecureAddress string
	// MetricsAddress serves Prometheus metrics from Gatherer at /metrics, guarded by
	// MetricsGuard (nil: plain HTTP without a credential, for loopback only).
	MetricsAddress string
	MetricsGuard   *metricsauth.Guard
	Gatherer       prometheus.Gatherer
	// MaxConnections caps open connections per config listener (secure and insecure each);
	// further clients wait in the kernel's accept queue. Zero means DefaultMaxConnections.
	MaxConnections int
	// MaxHeaderBytes caps a request's header; larger ones get 431. Zero means
	// DefaultMaxHeaderBytes.
	MaxHeaderBytes int
}

// DefaultMaxConnections bounds the file descriptors and goroutines a connection flood can take.
// A booting machine holds one connection for well under a second.
const DefaultMaxConnections = 1000

// DefaultMaxHeaderBytes is ample for what Ignition sends (User-Agent, Accept, Authorization:
// a few hundred bytes) and small enough that header floods cost little memory.
const DefaultMaxHeaderBytes = 8 << 10

// Listeners are bound sockets, ready to serve; binding first lets callers (and tests using
// port 0) learn the addresses before serving starts.
type Listeners struct {
	Secure, Insecure, Metrics net.Listener
	// MetricsErr is why the metrics address could not be bound (Metrics is then nil).
	MetricsErr error
	certs      *certwatcher.CertWatcher
	opts       ListenOptions
}

// Listen binds the configured addresses and loads the serving certificate.
func Listen(opts ListenOptions) (*Listeners, error) {
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = DefaultMaxConnections
	}
	if opts.MaxHeaderBytes <= 0 {
		opts.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	l := &Listeners{opts: opts}
	var err error
	if opts.SecureAddress != "" {
		if opts.CertFile == "" || opts.KeyFile == "" {
			return nil, errors.New("the secure listener needs --tls-cert-file and --tls-private-key-file")
		}
		if l.certs, err = certwatcher.New(opts.CertFile, opts.KeyFile); err != nil {
			return nil, fmt.Errorf("loading serving certificate: %w", err)
		}
		if l.Secure, err = net.Listen("tcp", opts.SecureAddress); err != nil {
			return nil, err
		}
		l.Secure = netutil.LimitListener(l.Secure, opts.MaxConnections)
	}
	if opts.InsecureAddress != "" {
		if l.Insecure, err = net.Listen("tcp", opts.InsecureAddress); err != nil {
			return nil, errors.Join(err, l.close())
		}
		l.Insecure = netutil.LimitListener(l.Insecure, opts.MaxConnections)
	}
	if opts.MetricsAddress != "" {
		// Machines' configs matter more than the server's metrics: an address taken on the host
		// (the server runs in the host's network; a stale process, or another dev cluster's
		// server on the same loopback port) must not keep new machines from booting. Serve says
		// so as an error, once, and the server goes on, as the agent does.
		if l.Metrics, l.MetricsErr = net.Listen("tcp", opts.MetricsAddress); l.MetricsErr == nil {
			l.Metrics = opts.MetricsGuard.Listener(l.Metrics)
		}
	}
	if l.Secure == nil && l.Insecure == nil {
		return nil, errors.Join(errors.New("both the secure and the insecure listener are disabled"), l.close())
	}
	return l, nil
}

func (l *Listeners) close() error {
	var errs []error
	for _, ln := range []net.Listener{l.Secure, l.Insecure, l.Metrics} {
		if ln != nil {
			errs = append(errs, ln.Close())
		}
	}
	return errors.Join(errs...)
}

// Serve serves handler until ctx ends, then shuts down gracefully.
func (l *Listeners) Serve(ctx context.Context, handler http.Handler, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 4)
	var servers []*http.Server
	start := func(srv *http.Server, ln net.Listener, tlsOn bool) {
		servers = append(servers, srv)
		go func() {
			var err error
			if tlsOn {
				err = srv.ServeTLS(ln, "", "")
			} else {
				err = srv.Serve(ln)
			}
			if !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("serving on %s: %w", ln.Addr(), err)
				cancel()
			}
		}()
	}
	if l.Secure != nil {
		go func() {
			if err := l.certs.Start(ctx); err != nil {
				errs <- fmt.Errorf("watching serving certificate: %w", err)
				cancel()
			}
		}()
		srv := newHTTPServer(handler, l.opts.MaxHeaderBytes)
		srv.TLSConfig = &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: l.certs.GetCertificate,
			NextProtos:     []string{"http/1.1"},
		}
		log.Info("serving HTTPS", "address", l.Secure.Addr().String())
		start(srv, l.Secure, true)
	}
	if l.Insecure != nil {
		log.Info("serving HTTP", "address", l.Insecure.Addr().String())
		start(newHTTPServer(handler, l.opts.MaxHeaderBytes), l.Insecure, false)
	}
	if l.MetricsErr != nil {
		log.Error("metrics are not served; the server goes on without them", "address", l.opts.MetricsAddress, "err", l.MetricsErr)
	}
	if l.Metrics != nil && l.opts.Gatherer != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", l.opts.MetricsGuard.Handler(promhttp.HandlerFor(l.opts.Gatherer, promhttp.HandlerOpts{})))
		log.Info("serving metrics", "address", l.Metrics.Addr().String(), "https", l.opts.MetricsGuard != nil)
		start(newHTTPServer(mux, DefaultMaxHeaderBytes), l.Metrics, false)
	}

	<-ctx.Done()
	shutdownCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
	defer done()
	var all []error
	for _, srv := range servers {
		all = append(all, srv.Shutdown(shutdownCtx))
	}
	for {
		select {
		case err := <-errs:
			all = append(all, err)
		default:
			return errors.Join(all...)
		}
	}
}

// newHTTPServer speaks HTTP/1.1 only (an empty TLSNextProto disables HTTP/2, like the
// original) and bounds slow clients and large headers.
func newHTTPServer(handler http.Handler, maxHeaderBytes int) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      2 * time.Minute,
		// Ignition does not reuse connections; a short idle timeout keeps idle keep-alive
		// connections from holding MaxConnections slots.
		IdleTimeout:    30 * time.Second,
		MaxHeaderBytes: maxHeaderBytes,
		TLSNextProto:   map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
}
