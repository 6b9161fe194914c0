package userdata

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

const (
	caV1 = "-----BEGIN CERTIFICATE-----\nMIIBone\n-----END CERTIFICATE-----\n"
	caV2 = "-----BEGIN CERTIFICATE-----\nMIIBtwo\n-----END CERTIFICATE-----\n"
)

// The scenarios run in order against one control plane: each builds on the state the last left.
func TestUserDataSecrets(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, ns := range []string{testOpts.MachineAPINamespace, testOpts.ServerNamespace} {
		if err := k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	caMap := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: testOpts.CA.Namespace, Name: testOpts.CA.Name}, Data: map[string]string{"ca-bundle.crt": caV1}}
	if err := k8sClient.Create(ctx, caMap); err != nil {
		t.Fatal(err)
	}
	installerOne := installerSecret("worker-user-data", `{"ignition":{"version":"3.1.0","config":{"merge":[{"source":"https://api-int:22623/config/worker"}]},"security":{"tls":{"certificateAuthorities":[{"source":"data:text/plain;charset=utf-8;base64,`+b64(caV1)+`"}]}}}}`)
	installerTwo := installerSecret("custom-user-data", `{"ignition":{"version":"3.1.0","security":{"tls":{"certificateAuthorities":[{"source":"data:,a"},{"source":"data:,b"}]}}}}`)
	for _, s := range []*corev1.Secret{installerOne, installerTwo} {
		if err := k8sClient.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}

	pool, err := pools.Builtin("worker")
	if err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: testOpts.MachineAPINamespace, Name: "worker-user-data-managed"}
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testOpts.ServerNamespace, Name: "worker-mcs-token"}, Data: map[string][]byte{"token": []byte("first")}}

	t.Run("no pointer config without the pool's token", func(t *testing.T) {
		waitEvent(t, ctx, "worker", ReasonPointerBlocked, "Secret "+testOpts.ServerNamespace+"/worker-mcs-token")
		if err := k8sClient.Get(ctx, key, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			t.Fatalf("a pointer config was written before the pool had a token: %v", err)
		}
		if err := k8sClient.Create(ctx, token); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("pool gets a valid managed secret", func(t *testing.T) {
		sec := waitSecret(t, ctx, key, func(s *corev1.Secret) bool { return strings.Contains(pointerCA(t, s), b64(caV1)) })
		if !strings.Contains(string(sec.Data["userData"]), "Bearer first") {
			t.Errorf("pointer config lacks the pool's token: %s", sec.Data["userData"])
		}
		cfg, err := ignition.Parse(sec.Data["userData"])
		if err != nil {
			t.Fatalf("userData does not validate: %v", err)
		}
		if *cfg.Ignition.Config.Merge[0].Source != "https://api-int.test.example:22623/config/worker" {
			t.Errorf("merge source %s", *cfg.Ignition.Config.Merge[0].Source)
		}
		if string(sec.Data["disableTemplating"]) != "true\n" || !protocol.IsManagedUserData(sec.Labels) {
			t.Errorf("secret metadata: %v %q", sec.Labels, sec.Data["disableTemplating"])
		}
		if len(sec.OwnerReferences) != 1 || sec.OwnerReferences[0].UID != pool.UID {
			t.Errorf("ownerReferences %+v", sec.OwnerReferences)
		}
	})

	t.Run("rotated CA rewrites managed and single-CA installer secrets only", func(t *testing.T) {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(caMap), caMap); err != nil {
			t.Fatal(err)
		}
		caMap.Data["ca-bundle.crt"] = caV2
		if err := k8sClient.Update(ctx, caMap); err != nil {
			t.Fatal(err)
		}
		waitSecret(t, ctx, key, func(s *corev1.Secret) bool { return strings.Contains(pointerCA(t, s), b64(caV2)) })
		rotated := waitSecret(t, ctx, client.ObjectKeyFromObject(installerOne), func(s *corev1.Secret) bool { return strings.Contains(pointerCA(t, s), b64(caV2)) })
		if !strings.Contains(string(rotated.Data["userData"]), `"version":"3.1.0"`) {
			t.Errorf("installer config changed beyond its CA: %s", rotated.Data["userData"])
		}
		waitEvent(t, ctx, "custom-user-data", ReasonCANotRotated, "")
		var two corev1.Secret
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(installerTwo), &two); err != nil {
			t.Fatal(err)
		}
		if string(two.Data["userData"]) != string(installerTwo.Data["userData"]) {
			t.Errorf("a two-CA installer secret was modified: %s", two.Data["userData"])
		}
	})

	t.Run("token rotation updates the header", func(t *testing.T) {
		token.Data["token"] = []byte("second")
		if err := k8sClient.Update(ctx, token); err != nil {
			t.Fatal(err)
		}
		waitSecret(t, ctx, key, func(s *corev1.Secret) bool {
			return strings.Contains(string(s.Data["userData"]), "Bearer second") && !strings.Contains(string(s.Data["userData"]), "Bearer first")
		})
	})

	t.Run("hand edit is reverted", func(t *testing.T) {
		var sec corev1.Secret
		if err := k8sClient.Get(ctx, key, &sec); err != nil {
			t.Fatal(err)
		}
		good := string(sec.Data["userData"])
		sec.Data["userData"] = []byte(`{"ignition":{"version":"3.4.0"}}`)
		if err := k8sClient.Update(ctx, &sec); err != nil {
			t.Fatal(err)
		}
		waitSecret(t, ctx, key, func(s *corev1.Secret) bool { return string(s.Data["userData"]) == good })
	})

	t.Run("deleting the pool removes its secret", func(t *testing.T) {
		if err := k8sClient.Delete(ctx, pool); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			err := k8sClient.Get(ctx, key, &corev1.Secret{})
			if apierrors.IsNotFound(err) {
				var one corev1.Secret
				if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(installerOne), &one); err != nil {
					t.Fatalf("installer secret went with the pool: %v", err)
				}
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatal("managed secret still there after its pool was deleted")
	})
}

func installerSecret(name, userData string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testOpts.MachineAPINamespace, Name: name}, Data: map[string][]byte{"userData": []byte(userData)}}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func pointerCA(t *testing.T, s *corev1.Secret) string {
	t.Helper()
	cfg, err := ignition.Parse(s.Data["userData"])
	if err != nil || len(cfg.Ignition.Security.TLS.CertificateAuthorities) == 0 {
		return ""
	}
	return *cfg.Ignition.Security.TLS.CertificateAuthorities[0].Source
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
	t.Fatalf("secret %s never reached the wanted state; last userData: %s", key, s.Data["userData"])
	return nil
}

// waitEvent waits for an event of reason about object whose message contains message.
func waitEvent(t *testing.T, ctx context.Context, object, reason, message string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var events corev1.EventList
		if err := k8sClient.List(ctx, &events); err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == object && e.Reason == reason && strings.Contains(e.Message, message) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no %s event for %s", reason, object)
}
