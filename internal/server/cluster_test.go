package server

import (
	"context"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mco-dev/mco/internal/etcdindex"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

func TestServedConfigName(t *testing.T) {
	tests := []struct {
		name         string
		spec, status string
		updated      int32
		want         string
	}{
		{"no node updated yet: what nodes run", "rendered-new", "rendered-old", 0, "rendered-old"},
		{"one node proved the target", "rendered-new", "rendered-old", 1, "rendered-new"},
		{"settled pool", "rendered-a", "rendered-a", 3, "rendered-a"},
		{"fresh pool without status", "rendered-new", "", 0, "rendered-new"},
		{"nothing rendered", "", "", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pool := &mcfgv1.MachineConfigPool{}
			pool.Spec.Configuration.Name = tc.spec
			pool.Status.Configuration.Name = tc.status
			pool.Status.UpdatedMachineCount = tc.updated
			if got := ServedConfigName(pool); got != tc.want {
				t.Fatalf("ServedConfigName = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestClusterMode runs the cluster source against a real API server: the served config follows
// §5.4 as the pool's status changes, token Secrets and the bootstrap credential are picked up
// from informers, and a deleted pool disappears.
func TestClusterMode(t *testing.T) {
	env := testenv.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := env.Client
	const ns = "mco-server-test"
	must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "openshift-config"}}))
	pullSecretRef := types.NamespacedName{Namespace: "openshift-config", Name: "pull-secret"}
	for name, path := range map[string]string{"rendered-worker-old": "/etc/old", "rendered-worker-new": "/etc/new"} {
		ign := `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"` + path + `","contents":{"source":"data:,x"}}]}}`
		must(t, c.Create(ctx, &mcfgv1.MachineConfig{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(ign)}},
		}))
	}
	pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker"}}
	pool.Spec.Configuration.Name = "rendered-worker-new"
	must(t, c.Create(ctx, pool))
	pool.Status.Configuration.Name = "rendered-worker-old"
	pool.Status.UpdatedMachineCount = 0
	must(t, c.Status().Update(ctx, pool))

	store := NewStore(time.Hour)
	srcCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		opts := ClusterOptions{Namespace: ns, APIServerURL: "https://api.example:6443", PullSecret: pullSecretRef}
		done <- RunCluster(srcCtx, env.Config, store, opts, discardLogger())
	}()
	t.Cleanup(func() { stop(); <-done })
	h := NewHandler(store, nil, discardLogger())

	t.Log("a pool without a token Secret is refused, whatever the request presents")
	waitFor(t, func() bool { return store.Get("worker") != nil })
	if rec := do(h, "GET", "/config/worker", "Authorization", "Bearer cluster-token", "Accept", accept34); rec.Code != 403 {
		t.Fatalf("pool without a token: %d, want 403", rec.Code)
	}
	must(t, c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: protocol.ServerTokenSecretName("worker"), Namespace: ns},
		Data:       map[string][]byte{protocol.ServerTokenKey: []byte("cluster-token")},
	}))

	servedFile := func(path string) func() bool {
		return func() bool {
			rec := do(h, "GET", "/config/worker", "Authorization", "Bearer cluster-token", "Accept", accept34)
			return rec.Code == 200 && strings.Contains(rec.Body.String(), `"path":"`+path+`"`)
		}
	}
	t.Log("no node updated: the pool's current config is served")
	waitFor(t, servedFile("/etc/old"))

	t.Log("one node updated: the target is served")
	pool.Status.UpdatedMachineCount = 1
	must(t, c.Status().Update(ctx, pool))
	waitFor(t, servedFile("/etc/new"))

	t.Log("the token Secret's token is required")
	for _, header := range [][]string{nil, {"Authorization", "Bearer other"}} {
		if rec := do(h, "GET", "/config/worker", header...); rec.Code != 403 {
			t.Fatalf("with %q: %d, want 403", header, rec.Code)
		}
	}

	t.Log("the bootstrap token Secret and CA bundle become the served kubeconfig")
	must(t, c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: DefaultBootstrapTokenSecret, Namespace: ns},
		Data:       map[string][]byte{"token": []byte("join-me"), "ca.crt": []byte("SECRET CA")},
	}))
	must(t, c.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: KubeconfigDataConfigMap, Namespace: ns},
		Data:       map[string]string{"ca-bundle.crt": "BUNDLE CA"},
	}))
	waitFor(t, func() bool {
		kc := string(store.Get("worker").state.Served.Kubeconfig)
		return strings.Contains(kc, "join-me") && strings.Contains(kc, "https://api.example:6443") && strings.Contains(kc, b64("BUNDLE CA"))
	})
	resp, err := store.Get("worker").response(ignition.V3_4)
	if err != nil || !strings.Contains(string(resp.body), KubeconfigPath) {
		t.Fatalf("served config lacks the kubeconfig: %v", err)
	}
	if strings.Contains(string(resp.body), PullSecretPath) {
		t.Fatal("pull secret served while there is none")
	}
	t.Log("without a ControllerConfig, the kubelet's client CA is the cluster CA the kubeconfig trusts")
	if cfg, err := ignition.Parse(resp.body); err != nil || string(fileBytes(t, cfg, KubeletCAPath)) != "BUNDLE CA" {
		t.Fatalf("kubelet CA: %v", err)
	}

	t.Log("the pull secret is served once it exists, root-owned 0600")
	pullSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: pullSecretRef.Name, Namespace: pullSecretRef.Namespace},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{PullSecretKey: []byte(`{"auths":{"quay.io":{"auth":"djE="}}}`)},
	}
	must(t, c.Create(ctx, pullSecret))
	servedPullSecret := func(want string) func() bool {
		return func() bool {
			resp, err := store.Get("worker").response(ignition.V3_4)
			if err != nil {
				return false
			}
			cfg, err := ignition.Parse(resp.body)
			if err != nil {
				t.Fatal(err)
			}
			f := findFile(cfg, PullSecretPath)
			if want == "" {
				return f.Path == ""
			}
			if f.Path == "" || string(fileBytes(t, cfg, PullSecretPath)) != want {
				return false
			}
			if *f.Mode != 0o600 || *f.User.ID != 0 {
				t.Fatalf("pull secret served with mode %o, owner %d", *f.Mode, *f.User.ID)
			}
			return true
		}
	}
	waitFor(t, servedPullSecret(`{"auths":{"quay.io":{"auth":"djE="}}}`))

	t.Log("a changed pull secret invalidates the cached config")
	before, err := store.Get("worker").response(ignition.V3_4)
	must(t, err)
	pullSecret.Data[PullSecretKey] = []byte(`{"auths":{"quay.io":{"auth":"djI="}}}`)
	must(t, c.Update(ctx, pullSecret))
	waitFor(t, servedPullSecret(`{"auths":{"quay.io":{"auth":"djI="}}}`))
	if after, _ := store.Get("worker").response(ignition.V3_4); after == before || after.etag == before.etag {
		t.Error("the served bytes were not rebuilt")
	}

	t.Log("a deleted pull secret is no longer served")
	must(t, c.Delete(ctx, pullSecret))
	waitFor(t, servedPullSecret(""))

	t.Log("annotating the pool makes its etcd_index requests templated")
	templated := func() bool {
		rec := do(h, "GET", "/config/worker?etcd_index=4", "Authorization", "Bearer cluster-token", "Accept", accept34)
		return rec.Code == 200 && strings.Contains(rec.Body.String(), `"path":"`+etcdindex.IndexPath+`"`)
	}
	if templated() {
		t.Fatal("a worker pool without the annotation templated")
	}
	pool.Annotations = map[string]string{protocol.EtcdIndexTemplatingAnnotation: "true"}
	must(t, c.Update(ctx, pool))
	waitFor(t, templated)

	t.Log("a deleted pool is no longer served")
	must(t, c.Delete(ctx, pool))
	waitFor(t, func() bool { return do(h, "GET", "/config/worker").Code == 404 })
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
