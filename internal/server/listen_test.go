package server

import (
	"bytes"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

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

// TestServesConfigsWhenTheMetricsAddressIsTaken: another process on the metrics port (the
// server is on the host's network) costs the metrics, said as an error, never the configs.
func TestServesConfigsWhenTheMetricsAddressIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ca := testenv.NewServingCA(t, t.TempDir())
	listeners, err := Listen(ListenOptions{SecureAddress: "127.0.0.1:0", CertFile: ca.CertFile, KeyFile: ca.KeyFile,
		MetricsAddress: taken.Addr().String(), Gatherer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatalf("Listen refused to serve for a taken metrics address: %v", err)
	}
	if listeners.Metrics != nil || listeners.MetricsErr == nil || !strings.Contains(listeners.MetricsErr.Error(), "address already in use") {
		t.Fatalf("metrics listener %v, error %v: want none, and the bind's error", listeners.Metrics, listeners.MetricsErr)
	}
	var logged bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- listeners.Serve(ctx, NewHandler(NewStore(time.Hour), nil, discardLogger()), slog.New(slog.NewTextHandler(&logged, nil)))
	}()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CAPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	waitFor(t, func() bool {
		resp, err := client.Get("https://" + listeners.Secure.Addr().String() + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if !strings.Contains(logged.String(), "level=ERROR msg=\"metrics are not served") {
		t.Errorf("the server's log does not say the metrics are not served:\n%s", logged.String())
	}
}
