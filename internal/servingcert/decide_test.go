package servingcert

import (
	"crypto/x509"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	t0        = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	testNames = mustNames("api-int.example.com", "10.0.0.5")
)

func mustNames(list ...string) Names {
	n, err := ParseNames(list)
	if err != nil {
		panic(err)
	}
	return n
}

// world is the three stored objects as the controller would leave them after carrying out
// plans: writes replace the data, set the core's annotations and the managed label.
type world struct {
	ca, serving, bundle Object
	names               Names
	policy              Policy
}

func newWorld() *world { return &world{names: testNames, policy: DefaultPolicy()} }

func (w *world) decide(t *testing.T, now time.Time) Plan {
	t.Helper()
	plan, err := Decide(Input{CA: w.ca, Serving: w.serving, Bundle: w.bundle, Names: w.names, Now: now, Policy: w.policy})
	if err != nil {
		t.Fatalf("Decide at %s: %v", now, err)
	}
	return plan
}

// step decides at now and applies the plan.
func (w *world) step(t *testing.T, now time.Time) Plan {
	t.Helper()
	plan := w.decide(t, now)
	apply(&w.ca, plan.CA)
	apply(&w.bundle, plan.Bundle)
	apply(&w.serving, plan.Serving)
	return plan
}

// settle steps until nothing changes (the controller's watch on its own writes).
func (w *world) settle(t *testing.T, now time.Time) []Plan {
	t.Helper()
	var plans []Plan
	for i := 0; i < 5; i++ {
		p := w.step(t, now)
		plans = append(plans, p)
		if p.CA == nil && p.Serving == nil && p.Bundle == nil {
			return plans
		}
	}
	t.Fatalf("no fixed point at %s after 5 steps", now)
	return nil
}

func apply(o *Object, w *Write) {
	if w == nil {
		return
	}
	o.Exists = true
	o.Data = maps.Clone(w.Data)
	if o.Labels == nil {
		o.Labels = map[string]string{}
	}
	o.Labels[LabelManaged] = ""
	if o.Annotations == nil {
		o.Annotations = map[string]string{}
	}
	maps.Copy(o.Annotations, w.Annotations)
}

func (w *world) leaf(t *testing.T) *x509.Certificate {
	t.Helper()
	leaf, err := parseServing(w.serving.Data[KeyTLSCert], w.serving.Data[KeyTLSKey])
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

func (w *world) bundleCerts(t *testing.T) []*x509.Certificate {
	t.Helper()
	certs, err := parseCerts(w.bundle.Data[KeyBundle])
	if err != nil {
		t.Fatal(err)
	}
	return certs
}

func (w *world) signingCA(t *testing.T) *x509.Certificate {
	t.Helper()
	a, err := parseAuthority(w.ca.Data, KeyCACert, KeyCAKey)
	if err != nil {
		t.Fatal(err)
	}
	return a.cert
}

// verify checks the served chain against the published bundle for every name, as a machine
// would at now.
func (w *world) verify(t *testing.T, now time.Time) {
	t.Helper()
	if err := verifyWith(w.serving.Data[KeyTLSCert], w.bundle.Data[KeyBundle], w.names, now); err != nil {
		t.Error(err)
	}
}

// verifyFirstOnly is verify for a client that trusts only the bundle's first certificate.
func (w *world) verifyFirstOnly(t *testing.T, now time.Time) {
	t.Helper()
	if err := verifyWith(w.serving.Data[KeyTLSCert], encodeCert(w.bundleCerts(t)[0].Raw), w.names, now); err != nil {
		t.Errorf("a client trusting the bundle's first CA only: %v", err)
	}
}

// verifyWith checks a chain against roots for every name.
func verifyWith(chain, roots []byte, names Names, now time.Time) error {
	certs, err := parseCerts(chain)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(roots)
	hosts := slices.Clone(names.DNS)
	for _, ip := range names.IPs {
		hosts = append(hosts, ip.String())
	}
	for _, h := range hosts {
		if _, err := certs[0].Verify(x509.VerifyOptions{DNSName: h, Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			return err
		}
	}
	return nil
}

func reasons(p Plan) []string {
	var out []string
	for _, e := range p.Events {
		out = append(out, e.Reason)
	}
	return out
}

func wantReasons(t *testing.T, p Plan, want ...string) {
	t.Helper()
	got := reasons(p)
	for _, r := range want {
		if !slices.Contains(got, r) {
			t.Errorf("events %v lack %s", got, r)
		}
	}
}

func wantNoWrites(t *testing.T, p Plan) {
	t.Helper()
	if p.CA != nil || p.Serving != nil || p.Bundle != nil {
		t.Errorf("writes CA %v, serving %v, bundle %v; want none", p.CA != nil, p.Serving != nil, p.Bundle != nil)
	}
	if len(p.Events) > 0 {
		t.Errorf("events %+v; want none", p.Events)
	}
}

// issued is a world after the first issue at t0.
func issuedWorld(t *testing.T) *world {
	w := newWorld()
	w.settle(t, t0)
	return w
}

const year = 365 * 24 * time.Hour

// The lifecycle table: each case starts from a world as the setup leaves it, decides at a time
// and checks the outcome.
func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*testing.T) *world
		at    time.Duration // after t0
		check func(*testing.T, *world, Plan, time.Time)
	}{
		{
			name:  "first issue writes CA, bundle and serving certificate",
			setup: func(*testing.T) *world { return newWorld() },
			check: func(t *testing.T, w *world, p Plan, now time.Time) {
				if p.CA == nil || p.Bundle == nil || p.Serving == nil {
					t.Fatalf("writes CA %v, bundle %v, serving %v; want all", p.CA != nil, p.Bundle != nil, p.Serving != nil)
				}
				wantReasons(t, p, ReasonCAIssued, ReasonIssued)
				w.verify(t, now)
				leaf, ca := w.leaf(t), w.signingCA(t)
				if got := leaf.NotAfter.Sub(now); got != year {
					t.Errorf("serving certificate valid for %s, want %s", got, year)
				}
				if got := ca.NotAfter.Sub(now); got != 10*year {
					t.Errorf("CA valid for %s, want %s", got, 10*year)
				}
				if len(w.bundleCerts(t)) != 1 || !w.bundleCerts(t)[0].Equal(ca) {
					t.Error("bundle is not exactly the signing CA")
				}
				if string(w.serving.Data[KeyTLSCA]) != string(w.bundle.Data[KeyBundle]) {
					t.Error("serving Secret's ca.crt is not the bundle")
				}
				if want := leaf.NotBefore.Add(time.Duration(0.8 * float64(leaf.NotAfter.Sub(leaf.NotBefore)))); !p.NextCheck.Equal(want) {
					t.Errorf("next check %s, want the serving certificate's renewal %s", p.NextCheck, want)
				}
			},
		},
		{
			name:  "nothing to do while everything is current",
			setup: issuedWorld,
			at:    200 * 24 * time.Hour,
			check: func(t *testing.T, _ *world, p Plan, _ time.Time) { wantNoWrites(t, p) },
		},
		{
			name: "changed names re-issue the serving certificate only",
			setup: func(t *testing.T) *world {
				w := issuedWorld(t)
				w.names = mustNames("api-int.example.com", "mcs.example.com", "10.0.0.5")
				return w
			},
			at: time.Hour,
			check: func(t *testing.T, w *world, p Plan, now time.Time) {
				if p.Serving == nil || p.CA != nil || p.Bundle != nil {
					t.Fatalf("writes CA %v, bundle %v, serving %v; want serving only", p.CA != nil, p.Bundle != nil, p.Serving != nil)
				}
				wantReasons(t, p, ReasonIssued)
				w.verify(t, now)
			},
		},
		{
			name:  "renewal after 80% of the serving certificate's life",
			setup: issuedWorld,
			at:    time.Duration(0.81 * float64(year)),
			check: func(t *testing.T, w *world, p Plan, now time.Time) {
				if p.Serving == nil || p.CA != nil || p.Bundle != nil {
					t.Fatalf("writes CA %v, bundle %v, serving %v; want serving only", p.CA != nil, p.Bundle != nil, p.Serving != nil)
				}
				wantReasons(t, p, ReasonIssued)
				if got := w.leaf(t).NotAfter; !got.Equal(now.Add(year)) {
					t.Errorf("renewed certificate valid until %s", got)
				}
				w.verify(t, now)
			},
		},
		{
			name:  "no renewal before 80%",
			setup: issuedWorld,
			at:    time.Duration(0.79 * float64(year)),
			check: func(t *testing.T, _ *world, p Plan, _ time.Time) { wantNoWrites(t, p) },
		},
		{
			name: "unreadable serving certificate is re-issued with a warning naming the key",
			setup: func(t *testing.T) *world {
				w := issuedWorld(t)
				w.serving.Data[KeyTLSCert] = []byte("not a certificate")
				return w
			},
			at: time.Hour,
			check: func(t *testing.T, w *world, p Plan, now time.Time) {
				if p.Serving == nil || p.CA != nil {
					t.Fatal("want a new serving certificate from the same CA")
				}
				if len(p.Events) != 1 || !p.Events[0].Warning || p.Events[0].About != ServingSecret || p.Events[0].Reason != ReasonInvalid ||
					!strings.Contains(p.Events[0].Message, "key tls.crt") {
					t.Errorf("events %+v: want one warning about key tls.crt of the serving Secret", p.Events)
				}
				w.verify(t, now)
			},
		},
		{
			name: "a key that does not match the certificate is re-issued",
			setup: func(t *testing.T) *world {
				w := issuedWorld(t)
				other := issuedWorld(t)
				w.serving.Data[KeyTLSKey] = other.serving.Data[KeyTLSKey]
				return w
			},
			at: time.Hour,
			check: func(t *testing.T, w *world, p Plan, now time.Time) {
				if p.Serving == nil || len(p.Events) != 1 || p.Events[0].Reason != ReasonInvalid || !strings.Contains(p.Events[0].Message, "tls.key") {
					t.Fatalf("serving write %v, events %+v", p.Serving != nil, p.Events)
				}
				w.verify(t, now)
			},
		},
		{
			name: "unreadable CA Secret: a new CA, bundle and serving certificate",
			setup: func(t *testing.T) *world {
				w := issuedWorld(t)
				w.ca.Data[KeyCAKey] = []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
				return w
			},
			at: time.Hour,
			check: func(t *testing.T, w *world, p Plan, now time.Time) {
				if p.CA == nil || p.Bundle == nil || p.Serving == nil {
					t.Fatal("want all three rewritten")
				}
				wantReasons(t, p, ReasonCAInvalid, ReasonCAIssued, ReasonIssued)
				for _, e := range p.Events {
					if e.Reason == ReasonCAInvalid && (!e.Warning || e.About != CASecret || !strings.Contains(e.Message, "key ca.key")) {
						t.Errorf("event %+v: want a warning about key ca.key of the CA Secret", e)
					}
				}
				w.verify(t, now)
			},
		},
		{
			name: "a hand-edited bundle is restored",
			setup: func(t *testing.T) *world {
				w := issuedWorld(t)
				w.bundle.Data[KeyBundle] = issuedWorld(t).bundle.Data[KeyBundle]
				return w
			},
			at: time.Hour,
			check: func(t *testing.T, w *world, p Plan, now time.Time) {
				if p.Bundle == nil || p.CA != nil || p.Serving != nil {
					t.Fatal("want the bundle only rewritten")
				}
				wantReasons(t, p, ReasonBundleCorrected)
				w.verify(t, now)
			},
		},
		{
			name: "an admin's serving Secret (no label) is never touched",
			setup: func(t *testing.T) *world {
				w := newWorld()
				w.serving = Object{Exists: true, Data: map[string][]byte{KeyTLSCert: []byte("admin's"), KeyTLSKey: []byte("admin's")}}
				return w
			},
			check: func(t *testing.T, _ *world, p Plan, _ time.Time) {
				if p.Standby == "" || !strings.Contains(p.Standby, "serving Secret") {
					t.Errorf("standby %q: want the serving Secret named", p.Standby)
				}
				wantNoWrites(t, p)
			},
		},
		{
			name: "a labelled Secret cert-manager wrote is not mco's",
			setup: func(t *testing.T) *world {
				w := issuedWorld(t)
				w.serving.Annotations = map[string]string{annotationCertManager: "machine-config-server"}
				return w
			},
			at: 2 * year,
			check: func(t *testing.T, _ *world, p Plan, _ time.Time) {
				if p.Standby == "" {
					t.Error("no standby")
				}
				wantNoWrites(t, p)
			},
		},
		{
			name: "an admin's bundle ConfigMap stops everything",
			setup: func(t *testing.T) *world {
				w := newWorld()
				w.bundle = Object{Exists: true, Data: map[string][]byte{KeyBundle: []byte("admin's CA")}}
				return w
			},
			check: func(t *testing.T, _ *world, p Plan, _ time.Time) {
				if !strings.Contains(p.Standby, "bundle ConfigMap") {
					t.Errorf("standby %q: want the bundle named", p.Standby)
				}
				if len(p.Events) != 1 || p.Events[0].About != BundleConfigMap || !p.Events[0].Warning || p.Events[0].Reason != ReasonNotManaged {
					t.Errorf("events %+v: want one warning on the bundle", p.Events)
				}
				p.Events = nil
				wantNoWrites(t, p)
			},
		},
		{
			name: "an expired signing CA is replaced at once",
			setup: func(t *testing.T) *world {
				w := issuedWorld(t)
				w.policy.RenewFraction = 0.99 // so that nothing rotated it in time
				return w
			},
			at: 10*year + time.Hour,
			check: func(t *testing.T, w *world, p Plan, now time.Time) {
				wantReasons(t, p, ReasonCARotated, ReasonCAIssued)
				if len(w.bundleCerts(t)) != 1 {
					t.Errorf("bundle holds %d CAs, want the new one only", len(w.bundleCerts(t)))
				}
				w.verify(t, now)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.setup(t)
			now := t0.Add(tc.at)
			p := w.step(t, now)
			tc.check(t, w, p, now)
			// Whatever happened, a second look at the same time changes nothing.
			if p.Standby == "" {
				wantNoWrites(t, w.step(t, now))
			}
		})
	}
}

// CA rotation, phase by phase, on one world: a new CA joins the bundle, the serving certificate
// moves to it only after the overlap, the old CA leaves the bundle when it expires.
func TestCARotation(t *testing.T) {
	w := issuedWorld(t)
	oldCA := w.signingCA(t)
	renewCA := oldCA.NotBefore.Add(time.Duration(0.8 * float64(oldCA.NotAfter.Sub(oldCA.NotBefore))))

	// Keep the serving certificate current up to the CA's renewal, as the controller would.
	for at := t0; at.Before(renewCA); at = at.Add(300 * 24 * time.Hour) {
		w.settle(t, at)
	}

	// Phase 1: the new CA is added to the bundle, the serving certificate stays on the old one.
	start := renewCA.Add(time.Minute)
	plans := w.settle(t, start)
	wantReasons(t, plans[0], ReasonCARotating)
	bundle := w.bundleCerts(t)
	if len(bundle) != 2 || !bundle[0].Equal(oldCA) {
		t.Fatalf("bundle holds %d CAs; want old (signing) + new", len(bundle))
	}
	newCA := bundle[1]
	if w.leaf(t).CheckSignatureFrom(oldCA) != nil {
		t.Error("the serving certificate left the old CA before the overlap")
	}
	w.verify(t, start)
	// A machine from an old pointer config (trusting only the old CA) still gets through, and
	// so does a client trusting only the bundle's first certificate.
	if err := verifyWith(w.serving.Data[KeyTLSCert], encodeCert(oldCA.Raw), w.names, start); err != nil {
		t.Errorf("old-CA machine rejected during the overlap: %v", err)
	}
	w.verifyFirstOnly(t, start)
	if p := w.decide(t, start); !p.NextCheck.Equal(start.Add(DefaultOverlap)) {
		t.Errorf("next check %s, want the end of the overlap %s", p.NextCheck, start.Add(DefaultOverlap))
	}

	// Phase 2: within the overlap, nothing changes.
	wantNoWrites(t, w.step(t, start.Add(DefaultOverlap-time.Minute)))

	// Phase 3: after the overlap the serving certificate is signed by the new CA; both stay
	// in the bundle.
	switchAt := start.Add(DefaultOverlap)
	plans = w.settle(t, switchAt)
	wantReasons(t, plans[0], ReasonCARotated, ReasonIssued)
	if !w.signingCA(t).Equal(newCA) || w.leaf(t).CheckSignatureFrom(newCA) != nil {
		t.Fatal("the serving certificate is not signed by the new CA after the overlap")
	}
	if bundle := w.bundleCerts(t); len(bundle) != 2 || !bundle[0].Equal(newCA) || !bundle[1].Equal(oldCA) {
		t.Errorf("bundle after the switch: %d CAs; want new + old", len(bundle))
	}
	w.verify(t, switchAt)
	w.verifyFirstOnly(t, switchAt)
	if p := w.decide(t, switchAt); !p.NextCheck.Equal(w.leaf(t).NotBefore.Add(time.Duration(0.8 * float64(w.leaf(t).NotAfter.Sub(w.leaf(t).NotBefore))))) {
		t.Errorf("next check %s: want the new serving certificate's renewal", p.NextCheck)
	}

	// Phase 4: the old CA leaves the bundle once expired.
	for at := switchAt; at.Before(oldCA.NotAfter); at = at.Add(200 * 24 * time.Hour) {
		w.settle(t, at)
	}
	plans = w.settle(t, oldCA.NotAfter)
	wantReasons(t, plans[0], ReasonCARetired)
	if bundle := w.bundleCerts(t); len(bundle) != 1 || !bundle[0].Equal(newCA) {
		t.Errorf("bundle after the old CA expired: %d CAs; want the new one", len(bundle))
	}
	if _, ok := w.ca.Data[KeyRetiredCACert]; ok {
		t.Error("the CA Secret still lists a retired CA")
	}
	w.verify(t, oldCA.NotAfter)
}

// The overlap counts from when the bundle holding the new CA was published, as recorded in the
// bundle: a lost or unreadable record starts it again, never shortens it.
func TestOverlapIsCountedFromPublication(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(*world)
		warn   bool
	}{
		{"annotation removed", func(w *world) { delete(w.bundle.Annotations, AnnotationPublished) }, false},
		{"annotation unreadable", func(w *world) { w.bundle.Annotations[AnnotationPublished] = "{not json" }, true},
		{"bundle lost the new CA", func(w *world) {
			certs, _ := parseCerts(w.bundle.Data[KeyBundle])
			w.bundle.Data[KeyBundle] = encodeCert(certs[0].Raw) // the signing CA only
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			w.policy.CAValidity = 100 * 24 * time.Hour
			w.policy.ServingValidity = 10 * 24 * time.Hour
			w.settle(t, t0)
			rotate := t0.Add(81 * 24 * time.Hour)
			w.settle(t, rotate)
			if n := len(w.bundleCerts(t)); n != 2 {
				t.Fatalf("no rotation started: %d CAs", n)
			}
			oldCA := w.signingCA(t)
			tamper := rotate.Add(12 * time.Hour)
			tc.tamper(w)
			p := w.step(t, tamper)
			if p.Bundle == nil {
				t.Fatal("bundle not rewritten")
			}
			if got := slices.ContainsFunc(p.Events, func(e Event) bool { return e.Warning && e.About == BundleConfigMap }); got != tc.warn {
				t.Errorf("events %+v: bundle warning %v, want %v", p.Events, got, tc.warn)
			}
			// 24h after the rotation started the overlap has not ended: it restarted at tamper.
			w.settle(t, rotate.Add(DefaultOverlap))
			if !w.signingCA(t).Equal(oldCA) {
				t.Fatal("switched to the new CA before the bundle holding it had been published for the overlap")
			}
			w.settle(t, tamper.Add(DefaultOverlap))
			if w.signingCA(t).Equal(oldCA) {
				t.Fatal("still on the old CA after the restarted overlap")
			}
			w.verify(t, tamper.Add(DefaultOverlap))
		})
	}
}

func TestNamesFor(t *testing.T) {
	for _, tc := range []struct {
		list       []string
		serverHost string
		want       string
		err        bool
	}{
		{nil, "api-int.example.com:22623", "api-int.example.com", false},
		{nil, "API-INT.example.com", "api-int.example.com", false},
		{nil, "[fd00::1]:22623", "fd00::1", false},
		{[]string{""}, "10.0.0.5:22623", "10.0.0.5", false},
		{[]string{"b.example.com", " a.example.com", "10.0.0.5", "b.example.com"}, "ignored:22623", "a.example.com,b.example.com,10.0.0.5", false},
		{[]string{"*.apps.example.com"}, "", "*.apps.example.com", false},
		{nil, "", "", false},
		{[]string{"not a name"}, "", "", true},
		{[]string{"-bad.example.com"}, "", "", true},
	} {
		got, err := NamesFor(tc.list, tc.serverHost)
		if (err != nil) != tc.err || got.String() != tc.want {
			t.Errorf("NamesFor(%q, %q) = %q, %v; want %q, error %v", tc.list, tc.serverHost, got, err, tc.want, tc.err)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	ok := DefaultPolicy()
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*Policy){
		"zero CA validity":                 func(p *Policy) { p.CAValidity = 0 },
		"negative serving validity":        func(p *Policy) { p.ServingValidity = -time.Hour },
		"serving outlives CA":              func(p *Policy) { p.ServingValidity = 11 * year },
		"fraction 1":                       func(p *Policy) { p.RenewFraction = 1 },
		"fraction 0":                       func(p *Policy) { p.RenewFraction = 0 },
		"negative overlap":                 func(p *Policy) { p.Overlap = -time.Hour },
		"overlap beyond the old CA's life": func(p *Policy) { p.Overlap = 3 * year },
		"serving certificate due at issue": func(p *Policy) { p.ServingValidity = 10 * time.Minute },
	} {
		p := DefaultPolicy()
		mutate(&p)
		if p.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := Decide(Input{Names: testNames, Now: t0, Policy: p}); err == nil {
			t.Errorf("%s: Decide accepted the policy", name)
		}
	}
	if _, err := Decide(Input{Now: t0, Policy: ok}); err == nil {
		t.Error("Decide without names succeeded")
	}
}
