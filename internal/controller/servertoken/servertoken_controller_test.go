package servertoken

import (
	"context"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// The scenarios run in order against one control plane: each builds on the state the last left.
func TestServerTokenSecrets(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, ns := range []string{testOpts.Namespace, userDataOpts.MachineAPINamespace} {
		must(t, k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	must(t, k8sClient.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: userDataOpts.CA.Namespace, Name: userDataOpts.CA.Name},
		Data:       map[string]string{"ca-bundle.crt": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"},
	}))
	// An admin's own token for pool infra, made before the pool: mco must leave it alone.
	adminSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testOpts.Namespace, Name: "infra-mcs-token"},
		Data: map[string][]byte{protocol.ServerTokenKey: []byte("admin-token")}}
	must(t, k8sClient.Create(ctx, adminSecret))
	infra := pool(t, "infra")
	must(t, k8sClient.Create(ctx, infra))
	worker := pool(t, "worker")
	must(t, k8sClient.Create(ctx, worker))

	key := client.ObjectKey{Namespace: testOpts.Namespace, Name: "worker-mcs-token"}
	pointerKey := client.ObjectKey{Namespace: userDataOpts.MachineAPINamespace, Name: "worker-user-data-managed"}
	var first string

	t.Run("a new pool gets a managed Secret with a random token", func(t *testing.T) {
		sec := waitSecret(t, ctx, key, func(s *corev1.Secret) bool { return len(s.Data[protocol.ServerTokenKey]) > 0 })
		first = string(sec.Data[protocol.ServerTokenKey])
		if len(first) != 64 {
			t.Errorf("token %d characters, want 64 hex digits (256 bits)", len(first))
		}
		if !protocol.IsManagedServerToken(sec.Labels) {
			t.Errorf("labels %v lack %s", sec.Labels, protocol.ManagedServerTokenLabel)
		}
		if got := sec.Annotations[protocol.ServerTokenIssuedAtAnnotation]; got != clock.Now().Format(time.RFC3339) {
			t.Errorf("issued-at %q, want the injected clock's %s", got, clock.Now().Format(time.RFC3339))
		}
		if o := sec.OwnerReferences; len(o) != 1 || o[0].UID != worker.UID || o[0].BlockOwnerDeletion == nil || !*o[0].BlockOwnerDeletion {
			t.Errorf("ownerReferences %+v, want the worker pool with blockOwnerDeletion", o)
		}
		if _, ok := sec.Data[protocol.PreviousTokenKey]; ok {
			t.Error("a new Secret has a previous token")
		}
		waitSecret(t, ctx, pointerKey, func(s *corev1.Secret) bool { return strings.Contains(string(s.Data["userData"]), "Bearer "+first) })
	})

	t.Run("rotation keeps the old token for the overlap and rewrites the pointer", func(t *testing.T) {
		clock.Advance(policy.Lifetime - policy.Overlap)
		poke(t, ctx, key)
		sec := waitSecret(t, ctx, key, func(s *corev1.Secret) bool { return string(s.Data[protocol.PreviousTokenKey]) == first })
		second := string(sec.Data[protocol.ServerTokenKey])
		if second == first || len(second) != 64 {
			t.Fatalf("token after rotation %q (was %q)", second, first)
		}
		if got, want := string(sec.Data[protocol.PreviousTokenExpiresKey]), clock.Now().Add(policy.Overlap).Format(time.RFC3339); got != want {
			t.Errorf("previous-token-expires %q, want now + overlap = %s", got, want)
		}
		if got := sec.Annotations[protocol.ServerTokenIssuedAtAnnotation]; got != clock.Now().Format(time.RFC3339) {
			t.Errorf("issued-at %q after rotation", got)
		}
		if _, ok := sec.Annotations["test/poke"]; !ok {
			t.Error("an annotation of someone else's was dropped")
		}
		waitSecret(t, ctx, pointerKey, func(s *corev1.Secret) bool {
			return strings.Contains(string(s.Data["userData"]), "Bearer "+second) && !strings.Contains(string(s.Data["userData"]), first)
		})
		waitEvent(t, ctx, "worker", ReasonTokenUpdated)
	})

	t.Run("the expired previous token is dropped", func(t *testing.T) {
		clock.Advance(policy.Overlap)
		poke(t, ctx, key)
		waitSecret(t, ctx, key, func(s *corev1.Secret) bool {
			_, prev := s.Data[protocol.PreviousTokenKey]
			_, exp := s.Data[protocol.PreviousTokenExpiresKey]
			return !prev && !exp
		})
	})

	t.Run("a deleted token Secret is issued again", func(t *testing.T) {
		var sec corev1.Secret
		must(t, k8sClient.Get(ctx, key, &sec))
		old := string(sec.Data[protocol.ServerTokenKey])
		must(t, k8sClient.Delete(ctx, &sec))
		waitSecret(t, ctx, key, func(s *corev1.Secret) bool {
			return s.UID != sec.UID && len(s.Data[protocol.ServerTokenKey]) == 64 && string(s.Data[protocol.ServerTokenKey]) != old
		})
	})

	t.Run("an admin's token Secret is left alone and reported once", func(t *testing.T) {
		waitEvent(t, ctx, "infra", ReasonTokenNotManaged)
		poke(t, ctx, client.ObjectKeyFromObject(adminSecret))
		time.Sleep(2 * time.Second) // room for a wrong write to happen
		var got corev1.Secret
		must(t, k8sClient.Get(ctx, client.ObjectKeyFromObject(adminSecret), &got))
		if len(got.Data) != 1 || string(got.Data[protocol.ServerTokenKey]) != "admin-token" || protocol.IsManagedServerToken(got.Labels) ||
			len(got.OwnerReferences) != 0 || got.Annotations[protocol.ServerTokenIssuedAtAnnotation] != "" {
			t.Errorf("the admin's Secret was changed: data %q labels %v owners %v annotations %v", got.Data, got.Labels, got.OwnerReferences, got.Annotations)
		}
		if n := countEvents(t, ctx, "infra", ReasonTokenNotManaged); n != 1 {
			t.Errorf("%d %s events, want 1", n, ReasonTokenNotManaged)
		}
		// The pointer config carries the admin's token.
		waitSecret(t, ctx, client.ObjectKey{Namespace: userDataOpts.MachineAPINamespace, Name: "infra-user-data-managed"},
			func(s *corev1.Secret) bool { return strings.Contains(string(s.Data["userData"]), "Bearer admin-token") })
	})

	t.Run("deleting a pool deletes its managed Secret, never the admin's", func(t *testing.T) {
		must(t, k8sClient.Delete(ctx, worker))
		must(t, k8sClient.Delete(ctx, infra))
		waitGone(t, ctx, key)
		waitGone(t, ctx, pointerKey)
		var got corev1.Secret
		must(t, k8sClient.Get(ctx, client.ObjectKeyFromObject(adminSecret), &got))
		if string(got.Data[protocol.ServerTokenKey]) != "admin-token" {
			t.Errorf("admin token changed: %q", got.Data)
		}
	})
}

func pool(t *testing.T, name string) *mcfgv1.MachineConfigPool {
	t.Helper()
	p, err := pools.Builtin("worker")
	if err != nil {
		t.Fatal(err)
	}
	p.Name = name
	p.Labels = nil
	return p
}

// poke changes an annotation of someone else's, which wakes the controller as any edit does.
func poke(t *testing.T, ctx context.Context, key client.ObjectKey) {
	t.Helper()
	var s corev1.Secret
	must(t, k8sClient.Get(ctx, key, &s))
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations["test/poke"] = time.Now().String()
	must(t, k8sClient.Update(ctx, &s))
}

func waitSecret(t *testing.T, ctx context.Context, key client.ObjectKey, cond func(*corev1.Secret) bool) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if err := k8sClient.Get(ctx, key, &s); err == nil && cond(&s) {
			return &s
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("Secret %s never reached the wanted state; last: labels %v annotations %v data keys %v", key, s.Labels, s.Annotations, keys(s.Data))
	return nil
}

func waitGone(t *testing.T, ctx context.Context, key client.ObjectKey) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if apierrors.IsNotFound(k8sClient.Get(ctx, key, &corev1.Secret{})) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("Secret %s still there after its pool was deleted", key)
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func countEvents(t *testing.T, ctx context.Context, object, reason string) int {
	t.Helper()
	var events corev1.EventList
	must(t, k8sClient.List(ctx, &events))
	n := 0
	for _, e := range events.Items {
		if e.InvolvedObject.Name == object && e.Reason == reason {
			n += int(max(e.Count, 1))
		}
	}
	return n
}

func waitEvent(t *testing.T, ctx context.Context, object, reason string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if countEvents(t, ctx, object, reason) > 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no %s event for %s", reason, object)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
