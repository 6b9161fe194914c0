package metricsauth

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

func TestSecureOffLoopbackOnly(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8797": false, "[::1]:8797": false, "localhost:8797": false, "127.0.0.2:1": false,
		":9191": true, "0.0.0.0:9191": true, "[::]:9191": true, "10.87.0.5:8797": true, "node-1:8797": true,
	} {
		got, err := Endpoint{Address: addr}.Secure()
		if err != nil || got != want {
			t.Errorf("Secure(%s) = %v, %v; want %v", addr, got, err, want)
		}
	}
	if _, err := (Endpoint{Address: "8797"}).Secure(); err == nil {
		t.Error("an address without a port is accepted")
	}
}

func TestNoAPIServerNoSecureEndpoint(t *testing.T) {
	if g, err := (Endpoint{Address: "127.0.0.1:1"}).Guard(nil); g != nil || err != nil {
		t.Errorf("loopback: guard %v, err %v; want plain HTTP", g, err)
	}
	if _, err := (Endpoint{Address: ":1"}).Guard(nil); err == nil {
		t.Error("off loopback without an API server: no error")
	}
}

// writePair writes a self-signed key pair for host into dir as the kubelet lays out a Secret.
func writePair(t *testing.T, dir, host string) {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{CertFile: certPEM, KeyFile: keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func servedName(t *testing.T, k *KeyPair) string {
	t.Helper()
	c, err := k.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf.DNSNames[0]
}

// The key pair starts without its files (the pod's Secret is not issued yet), then serves
// them, and serves a rotated pair once it is written.
func TestKeyPairWaitsForAndFollowsItsFiles(t *testing.T) {
	dir := t.TempDir()
	k := &KeyPair{CertFile: filepath.Join(dir, CertFile), KeyFile: filepath.Join(dir, KeyFile)}
	if _, err := k.GetCertificate(nil); err == nil {
		t.Fatal("a certificate without files")
	}
	writePair(t, dir, "first")
	if got := servedName(t, k); got != "first" {
		t.Fatalf("serves %q, want first", got)
	}
	writePair(t, dir, "second")
	k.checked = time.Now().Add(-recheck) // as if the recheck interval had passed
	if got := servedName(t, k); got != "second" {
		t.Errorf("after rotation serves %q, want second", got)
	}
	if err := os.WriteFile(k.KeyFile, []byte("half-written"), 0o600); err != nil {
		t.Fatal(err)
	}
	k.checked = time.Time{}
	if got := servedName(t, k); got != "second" {
		t.Errorf("with a broken key file serves %q, want the last good one", got)
	}
}

func TestTLSConfigWithoutCertDirIsSelfSigned(t *testing.T) {
	cfg, selfSigned, err := Endpoint{Address: ":1"}.TLSConfig()
	if err != nil || !selfSigned || len(cfg.Certificates) != 1 || cfg.MinVersion != tls.VersionTLS12 {
		t.Fatalf("TLSConfig() = %v, %v, %v", cfg, selfSigned, err)
	}
	leaf, _ := x509.ParseCertificate(cfg.Certificates[0].Certificate[0])
	if !leaf.IPAddresses[0].Equal(net.IPv4(127, 0, 0, 1)) {
		t.Errorf("self-signed for %v", leaf.IPAddresses)
	}
}

func TestWithHost(t *testing.T) {
	for _, c := range []struct{ addr, host, want string }{
		{":8797", "10.87.0.11", "10.87.0.11:8797"},
		{":8797", "fd00::11", "[fd00::11]:8797"},
		{"127.0.0.1:22625", "", "127.0.0.1:22625"},
	} {
		if got, err := WithHost(c.addr, c.host); err != nil || got != c.want {
			t.Errorf("WithHost(%q, %q) = %q, %v; want %q", c.addr, c.host, got, err, c.want)
		}
	}
	for _, c := range []struct{ addr, host string }{{"8797", "10.0.0.1"}, {":8797", "[::1]"}} {
		if _, err := WithHost(c.addr, c.host); err == nil {
			t.Errorf("WithHost(%q, %q) took it", c.addr, c.host)
		}
	}
}
