package metricsauth

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"

	"k8s.io/client-go/rest"
)

// Guard is how a secure endpoint serves: over TLS, every request reviewed. A nil *Guard is a
// loopback endpoint's: plain HTTP, nothing reviewed.
type Guard struct {
	TLS      *tls.Config
	Reviewer *Reviewer
	// SelfSigned: no CertDir was given, so no scraper can verify the certificate.
	SelfSigned bool
}

// ErrNoAPIServer is Guard's answer for a secure endpoint of a process without an API server
// to review tokens with (the server's bootstrap and from-dir modes).
var ErrNoAPIServer = errors.New("metrics off loopback are served only to tokens the API server accepts, and this mode has no API server: bind them to 127.0.0.1")

// Guard says how e is served: nil for a loopback endpoint, else TLS and a Reviewer asking the
// API server apiServer returns (nil: none, ErrNoAPIServer).
func (e Endpoint) Guard(apiServer func() (*rest.Config, error)) (*Guard, error) {
	secure, err := e.Secure()
	if err != nil || !secure {
		return nil, err
	}
	var cfg *rest.Config
	if apiServer != nil {
		if cfg, err = apiServer(); err != nil {
			return nil, fmt.Errorf("--metrics-bind-address %s: %w", e.Address, err)
		}
	}
	if cfg == nil {
		return nil, fmt.Errorf("--metrics-bind-address %s: %w", e.Address, ErrNoAPIServer)
	}
	g := &Guard{}
	if g.TLS, g.SelfSigned, err = e.TLSConfig(); err != nil {
		return nil, err
	}
	if g.Reviewer, err = NewReviewer(cfg); err != nil {
		return nil, fmt.Errorf("--metrics-bind-address %s: %w", e.Address, err)
	}
	return g, nil
}

// Listener is ln, over TLS unless g is nil.
func (g *Guard) Listener(ln net.Listener) net.Listener {
	if g == nil {
		return ln
	}
	return tls.NewListener(ln, g.TLS)
}

// Handler is h, reviewing every request unless g is nil.
func (g *Guard) Handler(h http.Handler) http.Handler {
	if g == nil {
		return h
	}
	return g.Reviewer.Protect(h)
}
