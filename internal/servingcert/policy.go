package servingcert

import (
	"crypto/x509"
	"fmt"
	"time"
)

// Policy sets lifetimes and when to renew.
type Policy struct {
	// CAValidity is the lifetime of a new CA.
	CAValidity time.Duration
	// ServingValidity is the lifetime of a new serving certificate (never beyond its CA's).
	ServingValidity time.Duration
	// RenewFraction of a certificate's lifetime after which it is replaced.
	RenewFraction float64
	// Overlap is how long the bundle must have held a new CA before the serving certificate
	// is signed by it.
	Overlap time.Duration
}

// Defaults of Policy.
const (
	DefaultCAValidity      = 10 * 365 * 24 * time.Hour
	DefaultServingValidity = 365 * 24 * time.Hour
	DefaultRenewFraction   = 0.8
	DefaultOverlap         = 24 * time.Hour
)

// DefaultPolicy is 10-year CAs, 1-year serving certificates, renewal at 80%, a 24h overlap.
func DefaultPolicy() Policy {
	return Policy{CAValidity: DefaultCAValidity, ServingValidity: DefaultServingValidity, RenewFraction: DefaultRenewFraction, Overlap: DefaultOverlap}
}

// backdate makes new certificates valid slightly in the past: a machine booting with a clock
// behind the cluster's must not find the certificate not yet valid.
const backdate = time.Hour

// Validate rejects a policy under which a rotation could not complete.
func (p Policy) Validate() error {
	switch {
	case p.CAValidity <= 0:
		return fmt.Errorf("CA validity %s: must be positive", p.CAValidity)
	case p.ServingValidity <= 0:
		return fmt.Errorf("serving certificate validity %s: must be positive", p.ServingValidity)
	case p.ServingValidity > p.CAValidity:
		return fmt.Errorf("serving certificate validity %s: must not exceed the CA validity %s", p.ServingValidity, p.CAValidity)
	case p.RenewFraction <= 0 || p.RenewFraction >= 1:
		return fmt.Errorf("renewal fraction %v: must be between 0 and 1", p.RenewFraction)
	case p.Overlap < 0:
		return fmt.Errorf("overlap %s: must not be negative", p.Overlap)
	}
	// Certificates are backdated; one so short-lived that it is due when issued would be
	// issued again on every look.
	for what, v := range map[string]time.Duration{"CA": p.CAValidity, "serving certificate": p.ServingValidity} {
		if float64(v+backdate)*p.RenewFraction <= float64(backdate) {
			return fmt.Errorf("%s validity %s: too short, it would be due for renewal when issued (certificates are valid from %s before issue)", what, v, backdate)
		}
	}
	// The new CA must be trusted for the overlap before the old one expires.
	if left := time.Duration(float64(p.CAValidity) * (1 - p.RenewFraction)); p.Overlap >= left {
		return fmt.Errorf("overlap %s: must be shorter than what is left of a CA's life when it is rotated (%s)", p.Overlap, left)
	}
	return nil
}

// renewAt is when cert is due for replacement.
func (p Policy) renewAt(cert *x509.Certificate) time.Time {
	life := cert.NotAfter.Sub(cert.NotBefore)
	return cert.NotBefore.Add(time.Duration(float64(life) * p.RenewFraction))
}
