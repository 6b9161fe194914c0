package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/testenv"
)

// TestServingCertificateReloadsFromSecretVolume is the reload as it happens in a pod: the
// kubelet updates a mounted Secret (machine-config-server-tls, renewed by mco controller) by
// writing a new timestamped directory and swapping the ..data symlink in one rename, and the
// served files are symlinks through ..data; nothing is written in place. New handshakes must
// present the new certificate.
func TestServingCertificateReloadsFromSecretVolume(t *testing.T) {
	mount := t.TempDir()
	first := testenv.NewServingCA(t, t.TempDir())
	projectSecret(t, mount, "..2026_01_01_00_00_00.1", first)
	for _, name := range []string{"tls.crt", "tls.key"} {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(mount, name)); err != nil {
			t.Fatal(err)
		}
	}
	listeners, err := Listen(ListenOptions{SecureAddress: "127.0.0.1:0", CertFile: filepath.Join(mount, "tls.crt"), KeyFile: filepath.Join(mount, "tls.key")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- listeners.Serve(ctx, NewHandler(NewStore(time.Hour), nil, discardLogger()), discardLogger())
	}()
	t.Cleanup(func() { cancel(); <-done })
	addr := listeners.Secure.Addr().String()
	handshake := func(ca []byte) error {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
		if err == nil {
			conn.Close()
		}
		return err
	}
	if err := handshake(first.CAPEM); err != nil {
		t.Fatal(err)
	}

	second := testenv.NewServingCA(t, t.TempDir())
	projectSecret(t, mount, "..2026_01_02_00_00_00.2", second)
	waitFor(t, func() bool { return handshake(second.CAPEM) == nil })
	if err := handshake(first.CAPEM); err == nil {
		t.Error("the old certificate is still presented after the swap")
	}
}

// projectSecret writes ca's files into a new directory of mount and points ..data at it with
// one rename, then removes the previous directory, as the kubelet's atomic writer does.
func projectSecret(t *testing.T, mount, dir string, ca testenv.ServingCA) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(mount, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{"tls.crt": ca.CertFile, "tls.key": ca.KeyFile} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mount, dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	previous, _ := os.Readlink(filepath.Join(mount, "..data"))
	if err := os.Symlink(dir, filepath.Join(mount, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(mount, "..data_tmp"), filepath.Join(mount, "..data")); err != nil {
		t.Fatal(err)
	}
	if previous != "" {
		if err := os.RemoveAll(filepath.Join(mount, previous)); err != nil {
			t.Fatal(err)
		}
	}
}
