package servingcert

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// keyPair is a certificate and its key, and their PEM as stored.
type keyPair struct {
	cert    *x509.Certificate
	certPEM []byte
	key     *ecdsa.PrivateKey
	keyPEM  []byte
}

// authority is a CA this core signs with.
type authority struct{ keyPair }

// issueCA makes a self-signed CA valid from now (backdated) for p.CAValidity.
func issueCA(now time.Time, p Policy) (*authority, error) {
	pair, err := signNew("CA", &x509.Certificate{
		// A distinct name per CA, so a bundle of old and new CAs is readable by humans and
		// clients that match issuers by name.
		Subject:               pkix.Name{CommonName: fmt.Sprintf("mco machine-config-server CA %d", now.Unix())},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(p.CAValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}, nil)
	if err != nil {
		return nil, err
	}
	return &authority{*pair}, nil
}

// issueServing signs a serving certificate for names with ca, valid for p.ServingValidity
// but never beyond the CA.
func issueServing(ca *authority, names Names, now time.Time, p Policy) (*keyPair, error) {
	notAfter := now.Add(p.ServingValidity)
	if notAfter.After(ca.cert.NotAfter) {
		notAfter = ca.cert.NotAfter
	}
	return signNew("serving", &x509.Certificate{
		Subject:     pkix.Name{CommonName: names.first()},
		DNSNames:    names.DNS,
		IPAddresses: names.IPs,
		NotBefore:   now.Add(-backdate),
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca)
}

// signNew generates a P-256 key and a certificate for it from tmpl (given a random serial),
// signed by ca, or self-signed when ca is nil. what names the certificate in errors.
func signNew(what string, tmpl *x509.Certificate, ca *authority) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating %s key: %w", what, err)
	}
	if tmpl.SerialNumber, err = newSerial(); err != nil {
		return nil, err
	}
	parent, parentKey := tmpl, key
	if ca != nil {
		parent, parentKey = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, fmt.Errorf("signing %s certificate: %w", what, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, certPEM: encodeCert(der), key: key, keyPEM: keyPEM}, nil
}

func newSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	return serial.Add(serial, big.NewInt(1)), nil
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// parseCerts reads every CERTIFICATE block of data; anything else in it is an error.
func parseCerts(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			if len(bytes.TrimSpace(rest)) > 0 {
				return nil, errors.New("data after the last PEM block")
			}
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("PEM block %q, want CERTIFICATE", block.Type)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM certificate")
	}
	return certs, nil
}

// parseAuthority reads a CA certificate and its key from data[certKey] and data[keyKey].
func parseAuthority(data map[string][]byte, certKey, keyKey string) (*authority, error) {
	certs, err := parseCerts(data[certKey])
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", certKey, err)
	}
	if len(certs) != 1 {
		return nil, fmt.Errorf("key %s: %d certificates, want 1", certKey, len(certs))
	}
	cert := certs[0]
	if !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("key %s: certificate %q is not a CA", certKey, cert.Subject.CommonName)
	}
	block, _ := pem.Decode(data[keyKey])
	if block == nil {
		return nil, fmt.Errorf("key %s: no PEM private key", keyKey)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", keyKey, err)
	}
	key, ok := parsed.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("key %s: %T, want an ECDSA key", keyKey, parsed)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("key %s: does not match the certificate in %s", keyKey, certKey)
	}
	return &authority{keyPair{cert: cert, certPEM: encodeCert(cert.Raw), key: key, keyPEM: pem.EncodeToMemory(block)}}, nil
}

// parseServing reads a serving certificate (the first certificate of certPEM) and checks the
// key belongs to it.
func parseServing(certPEM, keyPEM []byte) (*x509.Certificate, error) {
	if _, err := parseCerts(certPEM); err != nil {
		return nil, fmt.Errorf("key %s: %w", KeyTLSCert, err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("keys %s and %s: %w", KeyTLSCert, KeyTLSKey, err)
	}
	return pair.Leaf, nil
}

// fingerprint identifies a certificate in the bundle's published-at annotation.
func fingerprint(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.Raw)
	return hex.EncodeToString(sum[:])
}
