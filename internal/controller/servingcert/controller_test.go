package servingcert

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vincent-petithory/dataurl"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
	core "github.com/mco-dev/mco/internal/servingcert"
	"github.com/mco-dev/mco/internal/testenv"
)

const year = 365 * 24 * time.Hour

// The scenarios run in order against one control plane, each from the state the last left.
func TestServingCertificate(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, ns := range []string{serverNS, mapiNS} {
		if err := k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	pool, err := pools.Builtin("worker")
	if err != nil {
		t.Fatal(err)
	}
	// The pool's server token, which the pointer config carries (the token controller's job in
	// `mco controller`).
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: serverNS, Name: protocol.ServerTokenSecretName("worker")},
		Data: map[string][]byte{protocol.ServerTokenKey: []byte("worker-token")}}
	for _, obj := range []client.Object{pool, token} {
		if err := k8sClient.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	start := testClock.Now()
	var firstCA *x509.Certificate
	var firstLeaf *x509.Certificate

	t.Run("first issue: CA, bundle and a serving certificate chaining to it", func(t *testing.T) {
		s := waitState(t, ctx, "all three objects", func(s state) bool { return s.complete() })
		for name, labels := range map[string]map[string]string{CASecretName: s.ca.Labels, ServingSecretName: s.serving.Labels, BundleName: s.bundle.Labels} {
			if _, ok := labels[core.LabelManaged]; !ok {
				t.Errorf("%s lacks label %s", name, core.LabelManaged)
			}
		}
		if s.serving.Type != corev1.SecretTypeTLS {
			t.Errorf("serving Secret type %s", s.serving.Type)
		}
		s.verify(t, testClock.Now())
		if len(s.bundleCerts(t)) != 1 {
			t.Errorf("bundle holds %d CAs, want 1", len(s.bundleCerts(t)))
		}
		firstCA, firstLeaf = s.bundleCerts(t)[0], s.leaf(t)
		if got := firstLeaf.NotAfter.Sub(start).Round(time.Hour); got != year {
			t.Errorf("serving certificate valid for %s, want a year", got)
		}
		waitEvent(t, ctx, CASecretName, core.ReasonCAIssued)
		waitEvent(t, ctx, ServingSecretName, core.ReasonIssued)
	})

	t.Run("the pool's pointer config trusts the published bundle", func(t *testing.T) {
		waitPointerCA(t, ctx, func(b []byte) bool { return pemEqual(b, state{}.read(t, ctx).bundle.Data[core.KeyBundle]) })
	})

	t.Run("renewal after 80% of the serving certificate's life, same CA", func(t *testing.T) {
		testClock.SetTime(start.Add(time.Duration(0.81 * float64(year))))
		s := waitState(t, ctx, "a renewed serving certificate", func(s state) bool {
			return s.complete() && !s.leafOrNil().Equal(firstLeaf)
		})
		if !s.leaf(t).NotAfter.After(firstLeaf.NotAfter) || s.leaf(t).CheckSignatureFrom(firstCA) != nil {
			t.Error("the renewed certificate is not a later one from the same CA")
		}
		s.verify(t, testClock.Now())
	})

	var newCA *x509.Certificate
	rotateAt := firstCA.NotBefore.Add(time.Duration(0.8 * float64(firstCA.NotAfter.Sub(firstCA.NotBefore)))).Add(time.Minute)
	t.Run("CA rotation: the new CA joins the bundle and the pointer configs first", func(t *testing.T) {
		testClock.SetTime(rotateAt)
		s := waitState(t, ctx, "a bundle of two CAs", func(s state) bool { return s.complete() && len(s.bundleCerts(t)) == 2 })
		newCA = s.bundleCerts(t)[1]
		if !s.bundleCerts(t)[0].Equal(firstCA) {
			t.Error("the signing (old) CA is not first in the bundle")
		}
		// Let the controller look again a few times: the serving certificate stays on the old CA.
		time.Sleep(time.Second)
		s = state{}.read(t, ctx)
		if s.leaf(t).CheckSignatureFrom(firstCA) != nil {
			t.Error("the serving certificate moved to the new CA before the overlap")
		}
		s.verify(t, testClock.Now())
		waitPointerCA(t, ctx, func(b []byte) bool { return pemEqual(b, s.bundle.Data[core.KeyBundle]) })
		waitEvent(t, ctx, CASecretName, core.ReasonCARotating)
	})

	t.Run("CA rotation: after the overlap the serving certificate is signed by the new CA", func(t *testing.T) {
		testClock.SetTime(rotateAt.Add(core.DefaultOverlap))
		s := waitState(t, ctx, "a serving certificate from the new CA", func(s state) bool {
			return s.complete() && s.leafOrNil() != nil && s.leafOrNil().CheckSignatureFrom(newCA) == nil
		})
		if b := s.bundleCerts(t); len(b) != 2 || !b[0].Equal(newCA) || !b[1].Equal(firstCA) {
			t.Errorf("bundle after the switch holds %d CAs; want new + old", len(b))
		}
		s.verify(t, testClock.Now())
		waitEvent(t, ctx, CASecretName, core.ReasonCARotated)
	})

	t.Run("the old CA leaves the bundle and the pointer configs when it expires", func(t *testing.T) {
		testClock.SetTime(firstCA.NotAfter.Add(time.Minute))
		s := waitState(t, ctx, "a bundle of the new CA only", func(s state) bool {
			return s.complete() && len(s.bundleCerts(t)) == 1 && s.bundleCerts(t)[0].Equal(newCA)
		})
		s.verify(t, testClock.Now())
		waitPointerCA(t, ctx, func(b []byte) bool { return pemEqual(b, encodePEM(newCA)) })
	})

	t.Run("an unreadable serving certificate is re-issued with a warning", func(t *testing.T) {
		s := state{}.read(t, ctx)
		s.serving.Data[core.KeyTLSCert] = []byte("garbage")
		if err := k8sClient.Update(ctx, s.serving); err != nil {
			t.Fatal(err)
		}
		s = waitState(t, ctx, "a readable serving certificate", func(s state) bool { return s.complete() })
		s.verify(t, testClock.Now())
		waitEvent(t, ctx, ServingSecretName, core.ReasonInvalid)
	})

	t.Run("an admin's serving Secret is never touched", func(t *testing.T) {
		s := state{}.read(t, ctx)
		admin := s.serving.DeepCopy()
		delete(admin.Labels, core.LabelManaged)
		admin.Data = map[string][]byte{core.KeyTLSCert: []byte("admin's certificate"), core.KeyTLSKey: []byte("admin's key")}
		if err := k8sClient.Update(ctx, admin); err != nil {
			t.Fatal(err)
		}
		// Everything is due: the serving certificate and, later, the CA.
		testClock.SetTime(testClock.Now().Add(9 * year))
		time.Sleep(2 * time.Second)
		after := state{}.read(t, ctx)
		if after.serving.ResourceVersion != admin.ResourceVersion || string(after.serving.Data[core.KeyTLSCert]) != "admin's certificate" {
			t.Errorf("the admin's Secret was changed: %q", after.serving.Data[core.KeyTLSCert])
		}
		if after.ca.ResourceVersion != s.ca.ResourceVersion || after.bundle.ResourceVersion != s.bundle.ResourceVersion {
			t.Error("the CA Secret or the bundle changed while the serving Secret is the admin's")
		}
	})
}

// state is the three objects as stored.
type state struct {
	ca, serving *corev1.Secret
	bundle      *corev1.ConfigMap
}

func (state) read(t *testing.T, ctx context.Context) state {
	t.Helper()
	s, err := readState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readState(ctx context.Context) (state, error) {
	s := state{ca: &corev1.Secret{}, serving: &corev1.Secret{}, bundle: &corev1.ConfigMap{}}
	for name, obj := range map[string]client.Object{CASecretName: s.ca, ServingSecretName: s.serving, BundleName: s.bundle} {
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: serverNS, Name: name}, obj); err != nil {
			return state{}, err
		}
	}
	return s, nil
}

// complete: the serving certificate chains to the bundle and the Secret's ca.crt is the bundle.
func (s state) complete() bool {
	if s.serving == nil || s.bundle == nil {
		return false
	}
	return s.verifyErr(testClock.Now()) == nil && string(s.serving.Data[core.KeyTLSCA]) == s.bundle.Data[core.KeyBundle]
}

// verify checks the served chain against the published bundle for every name, as a machine
// would.
func (s state) verify(t *testing.T, now time.Time) {
	t.Helper()
	if err := s.verifyErr(now); err != nil {
		t.Error(err)
	}
}

func (s state) verifyErr(now time.Time) error {
	certs, err := parsePEM([]byte(s.serving.Data[core.KeyTLSCert]))
	switch {
	case err != nil:
		return err
	case len(certs) == 0:
		// Not nil: a tls.crt without a certificate (the corrupted one below) must not pass.
		return fmt.Errorf("%s holds no certificate", core.KeyTLSCert)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(s.bundle.Data[core.KeyBundle]))
	hosts := slices.Clone(testNames.DNS)
	for _, ip := range testNames.IPs {
		hosts = append(hosts, ip.String())
	}
	for _, h := range hosts {
		if _, err := certs[0].Verify(x509.VerifyOptions{DNSName: h, Roots: roots, CurrentTime: now}); err != nil {
			return err
		}
	}
	return nil
}

func (s state) leafOrNil() *x509.Certificate {
	certs, err := parsePEM(s.serving.Data[core.KeyTLSCert])
	if err != nil || len(certs) == 0 {
		return nil
	}
	return certs[0]
}

func (s state) leaf(t *testing.T) *x509.Certificate {
	t.Helper()
	leaf := s.leafOrNil()
	if leaf == nil {
		t.Fatal("no serving certificate")
	}
	return leaf
}

func (s state) bundleCerts(t *testing.T) []*x509.Certificate {
	t.Helper()
	certs, err := parsePEM([]byte(s.bundle.Data[core.KeyBundle]))
	if err != nil {
		t.Fatal(err)
	}
	return certs
}

func parsePEM(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return out, nil
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
}

func encodePEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func pemEqual[A, B ~[]byte | ~string](a A, b B) bool {
	return strings.TrimSpace(string(a)) == strings.TrimSpace(string(b))
}

func waitState(t *testing.T, ctx context.Context, what string, cond func(state) bool) state {
	t.Helper()
	var last state
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if last, err = readState(ctx); err == nil && cond(last) {
			return last
		}
	}
	t.Fatalf("never reached %s (clock %s); last error %v", what, testClock.Now(), err)
	return state{}
}

// waitPointerCA waits until worker-user-data-managed trusts a bundle for which ok holds.
func waitPointerCA(t *testing.T, ctx context.Context, ok func([]byte) bool) {
	t.Helper()
	key := client.ObjectKey{Namespace: mapiNS, Name: protocol.ManagedUserDataSecretName("worker")}
	var got []byte
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var sec corev1.Secret
		if err = k8sClient.Get(ctx, key, &sec); err != nil {
			continue
		}
		var cfg ignition.Config
		if cfg, err = ignition.Parse(sec.Data[protocol.UserDataKey]); err != nil || len(cfg.Ignition.Security.TLS.CertificateAuthorities) != 1 {
			continue
		}
		var u *dataurl.DataURL
		if u, err = dataurl.DecodeString(*cfg.Ignition.Security.TLS.CertificateAuthorities[0].Source); err != nil {
			continue
		}
		if got = u.Data; ok(got) {
			return
		}
	}
	t.Fatalf("%s never trusted the wanted bundle (last error %v); last bundle:\n%s", key, err, got)
}

// waitEvent waits for an event of reason about the named object in the server namespace.
func waitEvent(t *testing.T, ctx context.Context, object, reason string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var events corev1.EventList
		if err := k8sClient.List(ctx, &events, client.InNamespace(serverNS)); err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.InvolvedObject.Name == object && e.Reason == reason && strings.Contains(e.Message, serverNS+"/"+object)
		}) {
			return
		}
	}
	t.Fatalf("no %s event on %s", reason, object)
}
