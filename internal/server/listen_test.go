package server

import (
	"github.com/mco-dev/mco/internal/testenv"

	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
	"time"
)

// TestServingCertificateReloads replaces the certificate files under a running listener and
// expects new handshakes to present the new certificate, with TLS 1.1 refused throughout.
func TestServingCertificateReloads(t *testing.T) {
	dir := t.TempDir()
	first := testenv.NewServingCA(t, dir)
	listeners, err := Listen(ListenOptions{SecureAddress: "127.0.0.1:0", CertFile: first.CertFile, KeyFile: first.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	store := NewStore(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- listeners.Serve(ctx, NewHandler(store, nil, discardLogger()), discardLogger()) }()
	t.Cleanup(func() { cancel(); <-done })
	addr := listeners.Secure.Addr().String()

	handshake := func(ca []byte, maxVersion uint16) error {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, MaxVersion: maxVersion})
		if err == nil {
			conn.Close()
		}
		return err
	}
	if err := handshake(first.CAPEM, 0); err != nil {
		t.Fatal(err)
	}
	if err := handshake(first.CAPEM, tls.VersionTLS11); err == nil {
		t.Error("TLS 1.1 accepted")
	}
	// A second CA's certificate, written over the served files.
	second := testenv.NewServingCA(t, t.TempDir())
	for src, dst := range map[string]string{second.CertFile: first.CertFile, second.KeyFile: first.KeyFile} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { return handshake(second.CAPEM, 0) == nil })
}
