package metricsauth

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// recheck bounds how often a handshake reads the files: two small reads every few seconds at
// most, whatever the number of scrapers.
const recheck = 5 * time.Second

// KeyPair serves the certificate in CertFile and KeyFile, parsed again when either file's
// content changes.
// Unlike controller-runtime's certwatcher it starts without the files: a pod mounts the
// controller's Secret optionally (the controller issues it, so the controller's own pod cannot
// wait for it), and handshakes fail, saying why, until the kubelet has put the files there.
type KeyPair struct {
	CertFile, KeyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   string // the files' contents the certificate was parsed from
	checked time.Time
}

// GetCertificate is tls.Config's hook.
func (k *KeyPair) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cert != nil && time.Since(k.checked) < recheck {
		return k.cert, nil
	}
	k.checked = time.Now()
	certPEM, keyPEM, err := k.read()
	if err != nil {
		if k.cert != nil {
			return k.cert, nil // mid-replacement: keep serving the last good one
		}
		return nil, fmt.Errorf("metrics certificate not there (yet): %w", err)
	}
	stamp := string(certPEM) + string(keyPEM)
	if stamp == k.stamp && k.cert != nil {
		return k.cert, nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if k.cert != nil {
			return k.cert, nil // a half-written pair: the next look reads the whole one
		}
		return nil, fmt.Errorf("metrics certificate %s, %s: %w", k.CertFile, k.KeyFile, err)
	}
	k.cert, k.stamp = &cert, stamp
	return k.cert, nil
}

// read returns both files' contents. Comparing contents, not modification times, notices
// every rotation however the files were replaced.
func (k *KeyPair) read() (certPEM, keyPEM []byte, err error) {
	if certPEM, err = os.ReadFile(k.CertFile); err != nil {
		return nil, nil, err
	}
	if keyPEM, err = os.ReadFile(k.KeyFile); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}
