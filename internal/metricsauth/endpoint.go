package metricsauth

import (
	"crypto/tls"
	"fmt"
	"net"
	"path/filepath"
	"strings"

	certutil "k8s.io/client-go/util/cert"
)

// File names in Endpoint.CertDir: a kubernetes.io/tls Secret mounted as a directory.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// Endpoint is where and how one component serves its metrics.
type Endpoint struct {
	// Address is host:port; an empty address or "0" serves none.
	Address string
	// CertDir holds CertFile and KeyFile for HTTPS. Empty: a self-signed certificate made at
	// start, which encrypts but which no scraper can verify.
	CertDir string
}

// Served says whether Address asks for an endpoint at all.
func (e Endpoint) Served() bool { return e.Address != "" && e.Address != "0" }

// Secure says whether the endpoint is HTTPS with authentication and authorization: every one
// whose host is not a loopback address. ":9191" and "0.0.0.0:9191" listen on every address of
// the host, so they are not loopback.
func (e Endpoint) Secure() (bool, error) {
	host, _, err := net.SplitHostPort(e.Address)
	if err != nil {
		return false, fmt.Errorf("--metrics-bind-address %q: %w", e.Address, err)
	}
	if strings.EqualFold(host, "localhost") {
		return false, nil
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback(), nil
}

// TLSConfig is the HTTPS configuration of a secure endpoint: CertDir's key pair, read again
// whenever its files change (the kubelet replaces a mounted Secret's files when the controller
// rotates the certificate), or a self-signed one when there is no CertDir. selfSigned reports
// the latter, for the caller to warn about.
func (e Endpoint) TLSConfig() (cfg *tls.Config, selfSigned bool, err error) {
	cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	if e.CertDir != "" {
		pair := &KeyPair{CertFile: filepath.Join(e.CertDir, CertFile), KeyFile: filepath.Join(e.CertDir, KeyFile)}
		cfg.GetCertificate = pair.GetCertificate
		return cfg, false, nil
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		return nil, false, fmt.Errorf("making a self-signed metrics certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, false, fmt.Errorf("making a self-signed metrics certificate: %w", err)
	}
	cfg.Certificates = []tls.Certificate{pair}
	return cfg, true, nil
}

// WithHost is address with its host replaced by host (an IPv6 address without brackets, as the
// downward API gives a node's), for --metrics-bind-host: each binds its own node's address, not
// the host's other networks, and where one network namespace holds several nodes a wildcard bind
// would take the port from every other. An empty host keeps address.
func WithHost(address, host string) (string, error) {
	if host == "" {
		return address, nil
	}
	_, port, err := net.SplitHostPort(address)
	if err != nil {
		return "", fmt.Errorf("--metrics-bind-address %q: %w", address, err)
	}
	if net.ParseIP(host) == nil && strings.ContainsAny(host, "[]:") {
		return "", fmt.Errorf("--metrics-bind-host %q: not a host name or IP address", host)
	}
	return net.JoinHostPort(host, port), nil
}
