package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"time"

	devnet "github.com/mco-dev/mco/internal/dev/network"
)

// pki is the dev cluster's certificates: one CA signs the API server's and the Machine Config
// Server's serving certificates and the admin client certificate; a separate key pair signs
// service account tokens.
type pki struct {
	dir string
	// network is the cluster's address plan, whose addresses the API server's certificate names.
	network devnet.Layout
}

// kubeletClientCert is the API server's client certificate for kubelets.
const kubeletClientCert = "apiserver-kubelet-client"

func (p pki) path(name string) string { return filepath.Join(p.dir, name) }

// create writes every certificate and key; existing ones are kept, so a restarted cluster keeps
// trusting the kubeconfig and pointer configs it handed out, unless the cluster moved to
// another network slot, whose addresses the API server's certificate does not name.
func (p pki) create() error {
	// The newest file tells a complete set: an older dev cluster's directory gets a new one.
	if _, err := os.Stat(p.path(kubeletClientCert + ".crt")); err == nil && p.servesAt(p.network.HostAddr()) {
		return nil
	}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	caKey, caCert, err := selfSignedCA()
	if err != nil {
		return err
	}
	if err := writeCert(p.path("ca"), caCert.Raw, caKey); err != nil {
		return err
	}
	// The API server is reached at the host's address for its machines, and by pods at the
	// kubernetes Service, by its address or its names. (The Machine Config Server's certificate
	// is mco controller's to issue, as on a real install.)
	layout := p.network
	apiserver := x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IP(layout.HostAddr().AsSlice()), net.IP(layout.KubernetesService().AsSlice())},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	// The API server's client certificate for kubelets (logs, exec): kubelets authorize it by
	// asking the API server, which knows system:masters.
	kubeletClient := &x509.Certificate{
		Subject:  pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	admin := &x509.Certificate{
		Subject:  pkix.Name{CommonName: "mco-dev-admin", Organization: []string{"system:masters"}},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	for name, tmpl := range map[string]*x509.Certificate{"apiserver": &apiserver, "admin": admin, kubeletClientCert: kubeletClient} {
		if err := issue(p.path(name), tmpl, caCert, caKey); err != nil {
			return err
		}
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	return writeKeyPair(p.path("sa"), saKey)
}

// servesAt reports whether the API server's certificate names addr.
func (p pki) servesAt(addr netip.Addr) bool {
	data, err := os.ReadFile(p.path("apiserver.crt"))
	if err != nil {
		return false
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return false
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(cert.IPAddresses, func(ip net.IP) bool { return ip.Equal(addr.AsSlice()) })
}

func selfSignedCA() (*ecdsa.PrivateKey, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "mco-dev-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return key, cert, err
}

func issue(base string, tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().AddDate(1, 0, 0)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("issuing %s: %w", filepath.Base(base), err)
	}
	return writeCert(base, der, key)
}

func writeCert(base string, der []byte, key *ecdsa.PrivateKey) error {
	if err := os.WriteFile(base+".crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(base+".key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}

func writeKeyPair(base string, key *ecdsa.PrivateKey) error {
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".pub", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(base+".key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}
