package servingcert

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Input is everything Decide looks at.
type Input struct {
	CA, Serving, Bundle Object
	Names               Names
	Now                 time.Time
	Policy              Policy
}

// Write is an object's new content: its whole data and the annotations this core owns (to set,
// other annotations kept). The object also gets LabelManaged.
type Write struct {
	Data        map[string][]byte
	Annotations map[string]string
}

// Event is something to tell the admin, about one of the objects.
type Event struct {
	About   Which
	Warning bool
	Reason  string
	Message string
}

// Event reasons.
const (
	ReasonNotManaged      = "ServingCertificateNotManaged"
	ReasonCAIssued        = "ServingCAIssued"
	ReasonCAInvalid       = "ServingCAInvalid"
	ReasonCARotating      = "ServingCARotationStarted"
	ReasonCARotated       = "ServingCARotated"
	ReasonCARetired       = "ServingCARetired"
	ReasonIssued          = "ServingCertificateIssued"
	ReasonInvalid         = "ServingCertificateInvalid"
	ReasonBundleCorrected = "ServingCABundleCorrected"
)

// Plan is what to do: at most one write per object, events, and when to decide again.
type Plan struct {
	// Standby, when set, says why nothing is written: an object is not mco's.
	Standby string
	// CA, Serving and Bundle are nil when the object is already as it should be.
	CA, Serving, Bundle *Write
	Events              []Event
	// NextCheck is when a certificate falls due or an overlap ends; zero: no time-driven check.
	NextCheck time.Time
}

// Decide says what the three objects must hold now.
func Decide(in Input) (Plan, error) {
	if in.Names.Empty() {
		return Plan{}, fmt.Errorf("no names for the serving certificate")
	}
	if err := in.Policy.Validate(); err != nil {
		return Plan{}, err
	}
	if which, why := standby(in); why != "" {
		plan := Plan{Standby: why}
		if which != ServingSecret {
			// Not the supported "admin supplies the certificate" setup: say so where it shows.
			plan.Events = []Event{{About: which, Warning: true, Reason: ReasonNotManaged, Message: why}}
		}
		return plan, nil
	}
	d := &decision{in: in}
	d.published, d.publishedErr = publishedTimes(in.Bundle)
	cas, err := d.authorities()
	if err != nil {
		return Plan{}, err
	}
	d.writeCA(cas)
	bundle := d.writeBundle(cas)
	if err := d.writeServing(cas.current, bundle); err != nil {
		return Plan{}, err
	}
	d.plan.NextCheck = d.next
	return d.plan, nil
}

// standby says which object is not mco's, if any. The serving Secret without the label is the
// supported "admin supplies the certificate" setup; a foreign CA Secret or bundle is a name
// clash an admin must resolve, since replacing either would break trust.
func standby(in Input) (Which, string) {
	for _, o := range []struct {
		which Which
		obj   Object
	}{{ServingSecret, in.Serving}, {CASecret, in.CA}, {BundleConfigMap, in.Bundle}} {
		if o.obj.Exists && !o.obj.managed() {
			return o.which, fmt.Sprintf("the %s exists without label %s (or was written by cert-manager): it is not mco's, so mco manages none of the serving certificate, its CA and the bundle", o.which, LabelManaged)
		}
	}
	return 0, ""
}

// decision accumulates one Decide call's plan.
type decision struct {
	in   Input
	plan Plan
	next time.Time
	// published is when the stored bundle first held each CA it holds (see publishedTimes);
	// publishedErr says why its annotation was unreadable.
	published    map[string]time.Time
	publishedErr error
}

func (d *decision) event(about Which, warning bool, reason, format string, args ...any) {
	d.plan.Events = append(d.plan.Events, Event{About: about, Warning: warning, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// at records t as a time to decide again, if it is the earliest so far.
func (d *decision) at(t time.Time) {
	if d.next.IsZero() || t.Before(d.next) {
		d.next = t
	}
}

// authorities is the CA state after this decision: signing CA, waiting CA, retired CAs.
type authorities struct {
	current *authority
	next    *authority
	retired []*x509.Certificate
}

func (d *decision) authorities() (authorities, error) {
	now, p, data := d.in.Now, d.in.Policy, d.in.CA.Data
	var cas authorities
	var err error
	if d.in.CA.Exists {
		cas.current, err = parseAuthority(data, KeyCACert, KeyCAKey)
		if err != nil {
			d.event(CASecret, true, ReasonCAInvalid, "%v; issuing a new CA", err)
		}
		if _, ok := data[KeyNextCACert]; ok {
			if cas.next, err = parseAuthority(data, KeyNextCACert, KeyNextCAKey); err != nil {
				d.event(CASecret, true, ReasonCAInvalid, "%v; dropping the waiting CA", err)
			}
		}
		if len(data[KeyRetiredCACert]) > 0 {
			if cas.retired, err = parseCerts(data[KeyRetiredCACert]); err != nil {
				d.event(CASecret, true, ReasonCAInvalid, "key %s: %v; dropping the retired CAs", KeyRetiredCACert, err)
			}
		}
	}
	// A signing CA that is missing, unreadable or expired is replaced at once: nothing it
	// could sign would be trusted anyway. A waiting CA takes its place if there is one.
	if cas.current != nil && !now.Before(cas.current.cert.NotAfter) {
		d.event(CASecret, true, ReasonCARotated, "signing CA %q expired at %s; replacing it without waiting for the overlap",
			cas.current.cert.Subject.CommonName, cas.current.cert.NotAfter.UTC().Format(time.RFC3339))
		cas.current = nil
	}
	if cas.current == nil && cas.next != nil {
		cas.current, cas.next = cas.next, nil
	}
	if cas.current == nil {
		if cas.current, err = issueCA(now, p); err != nil {
			return authorities{}, err
		}
		d.event(CASecret, false, ReasonCAIssued, "issued CA %q, valid until %s", cas.current.cert.Subject.CommonName, cas.current.cert.NotAfter.UTC().Format(time.RFC3339))
	}
	if cas.next != nil {
		published, ok := d.published[fingerprint(cas.next.cert)]
		if ok && !now.Before(published.Add(p.Overlap)) {
			d.event(CASecret, false, ReasonCARotated, "signing with CA %q, in the published bundle since %s; CA %q stays in the bundle until it expires at %s",
				cas.next.cert.Subject.CommonName, published.UTC().Format(time.RFC3339), cas.current.cert.Subject.CommonName, cas.current.cert.NotAfter.UTC().Format(time.RFC3339))
			cas.retired = append([]*x509.Certificate{cas.current.cert}, cas.retired...)
			cas.current, cas.next = cas.next, nil
		} else if ok {
			d.at(published.Add(p.Overlap))
		}
	}
	if cas.next == nil {
		if renew := p.renewAt(cas.current.cert); now.Before(renew) {
			d.at(renew)
		} else {
			if cas.next, err = issueCA(now, p); err != nil {
				return authorities{}, err
			}
			d.event(CASecret, false, ReasonCARotating, "CA %q is due for renewal; added CA %q to the bundle, which signs the serving certificate once the bundle has held it for %s",
				cas.current.cert.Subject.CommonName, cas.next.cert.Subject.CommonName, p.Overlap)
		}
	}
	d.at(cas.current.cert.NotAfter)
	cas.retired = slices.DeleteFunc(cas.retired, func(c *x509.Certificate) bool {
		expired := !now.Before(c.NotAfter)
		if expired {
			d.event(CASecret, false, ReasonCARetired, "CA %q expired at %s; removed from the bundle", c.Subject.CommonName, c.NotAfter.UTC().Format(time.RFC3339))
		} else {
			d.at(c.NotAfter)
		}
		return expired || c.Equal(cas.current.cert)
	})
	return cas, nil
}

// writeCA plans the CA Secret when it differs from cas.
func (d *decision) writeCA(cas authorities) {
	data := map[string][]byte{KeyCACert: cas.current.certPEM, KeyCAKey: cas.current.keyPEM}
	if cas.next != nil {
		data[KeyNextCACert], data[KeyNextCAKey] = cas.next.certPEM, cas.next.keyPEM
	}
	if len(cas.retired) > 0 {
		data[KeyRetiredCACert] = concatPEM(cas.retired)
	}
	if !d.in.CA.Exists || !sameData(d.in.CA.Data, data) {
		d.plan.CA = &Write{Data: data}
	}
}

// bundle is the trusted CAs: the signing CA first, then the waiting one, then the retired ones.
// The signing CA leads because some clients trust only a bundle's first certificate (Ignition
// before v2, which reads spec 2 pointer configs): they keep working through the overlap, and
// move to the new CA when it starts signing.
func (cas authorities) bundle() []*x509.Certificate {
	out := []*x509.Certificate{cas.current.cert}
	if cas.next != nil {
		out = append(out, cas.next.cert)
	}
	return append(out, cas.retired...)
}

// writeBundle plans the bundle ConfigMap and returns the bundle's PEM.
func (d *decision) writeBundle(cas authorities) []byte {
	certs := cas.bundle()
	pemData := concatPEM(certs)
	if d.publishedErr != nil {
		d.event(BundleConfigMap, true, ReasonBundleCorrected, "annotation %s: %v; counting the overlap of its CAs from now", AnnotationPublished, d.publishedErr)
	}
	times := map[string]string{}
	for _, c := range certs {
		fp := fingerprint(c)
		if t, ok := d.published[fp]; ok {
			times[fp] = t.UTC().Format(time.RFC3339)
		} else {
			times[fp] = d.in.Now.UTC().Format(time.RFC3339)
		}
	}
	ann := map[string]string{AnnotationPublished: marshalPublished(times)}
	current := d.in.Bundle
	sameContent := current.Exists && bytes.Equal(current.Data[KeyBundle], pemData) && len(current.Data) == 1
	if current.Exists && !sameContent && d.plan.CA == nil {
		d.event(BundleConfigMap, true, ReasonBundleCorrected, "key %s does not hold exactly the CAs of the CA Secret; rewriting it", KeyBundle)
	}
	if !sameContent || current.Annotations[AnnotationPublished] != ann[AnnotationPublished] {
		d.plan.Bundle = &Write{Data: map[string][]byte{KeyBundle: pemData}, Annotations: ann}
	}
	return pemData
}

// writeServing plans the serving Secret: a new certificate when one is due, else the current
// one with the chain and bundle brought up to date.
func (d *decision) writeServing(ca *authority, bundle []byte) error {
	now, p, obj := d.in.Now, d.in.Policy, d.in.Serving
	var leafPEM, keyPEM []byte
	var leaf *x509.Certificate
	if obj.Exists {
		var err error
		leaf, err = parseServing(obj.Data[KeyTLSCert], obj.Data[KeyTLSKey])
		switch {
		case err != nil:
			d.event(ServingSecret, true, ReasonInvalid, "%v; issuing a new certificate", err)
			leaf = nil
		case !namesOf(leaf).Equal(d.in.Names):
			d.event(ServingSecret, false, ReasonIssued, "names changed from %s to %s; issuing a new certificate", namesOf(leaf), d.in.Names)
			leaf = nil
		case leaf.CheckSignatureFrom(ca.cert) != nil:
			d.event(ServingSecret, false, ReasonIssued, "certificate is not signed by the signing CA %q; issuing a new certificate", ca.cert.Subject.CommonName)
			leaf = nil
		case !now.Before(p.renewAt(leaf)):
			d.event(ServingSecret, false, ReasonIssued, "certificate valid until %s is due for renewal; issuing a new certificate", leaf.NotAfter.UTC().Format(time.RFC3339))
			leaf = nil
		default:
			leafPEM, keyPEM = encodeCert(leaf.Raw), obj.Data[KeyTLSKey]
		}
	}
	if leaf == nil {
		cert, err := issueServing(ca, d.in.Names, now, p)
		if err != nil {
			return err
		}
		leaf, leafPEM, keyPEM = cert.cert, cert.certPEM, cert.keyPEM
		if !obj.Exists {
			d.event(ServingSecret, false, ReasonIssued, "issued a certificate for %s signed by CA %q, valid until %s", d.in.Names, ca.cert.Subject.CommonName, leaf.NotAfter.UTC().Format(time.RFC3339))
		}
	}
	d.at(p.renewAt(leaf))
	data := map[string][]byte{
		KeyTLSCert: append(slices.Clone(leafPEM), ca.certPEM...),
		KeyTLSKey:  keyPEM,
		KeyTLSCA:   bundle,
	}
	if !obj.Exists || !sameData(obj.Data, data) {
		d.plan.Serving = &Write{Data: data}
	}
	return nil
}

// publishedTimes maps each CA the stored bundle holds to when it was first published, from the
// annotation; a CA the annotation names but the bundle does not hold is left out. An
// unreadable annotation counts as none, so every overlap starts again: late, never early.
func publishedTimes(b Object) (map[string]time.Time, error) {
	if !b.Exists {
		return nil, nil
	}
	held, err := parseCerts(b.Data[KeyBundle])
	if err != nil {
		return nil, nil
	}
	raw, ok := b.Annotations[AnnotationPublished]
	if !ok {
		return nil, nil
	}
	times, err := unmarshalPublished(raw)
	if err != nil {
		return nil, err
	}
	out := map[string]time.Time{}
	for _, c := range held {
		fp := fingerprint(c)
		if t, ok := times[fp]; ok {
			out[fp] = t
		}
	}
	return out, nil
}

func concatPEM(certs []*x509.Certificate) []byte {
	var out []byte
	for _, c := range certs {
		out = append(out, encodeCert(c.Raw)...)
	}
	return out
}

func sameData(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, bytes.Equal)
}
