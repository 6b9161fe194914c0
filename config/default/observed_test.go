package install

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-semver/semver"
	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	mcc "github.com/mco-dev/mco/internal/controller"
	bootimagecontroller "github.com/mco-dev/mco/internal/controller/bootimage"
	clusteroperatorcontroller "github.com/mco-dev/mco/internal/controller/clusteroperator"
	servertokencontroller "github.com/mco-dev/mco/internal/controller/servertoken"
	servingcertcontroller "github.com/mco-dev/mco/internal/controller/servingcert"
	"github.com/mco-dev/mco/internal/controller/userdata"
	agent "github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/reboot"
	"github.com/mco-dev/mco/internal/protocol"
	mcs "github.com/mco-dev/mco/internal/server"
	"github.com/mco-dev/mco/internal/servertoken"
	"github.com/mco-dev/mco/internal/servingcert"
)

// observedCall is one request a component sent, as RBAC sees it.
type observedCall struct {
	apiCall
	status int
	path   string
}

// recorder records every API request sent through a rest.Config.
type recorder struct {
	component string
	mu        sync.Mutex
	calls     []observedCall
}

func (r *recorder) RoundTrip(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		call, ok := parseRequest(r.component, req)
		if ok {
			if resp != nil {
				call.status = resp.StatusCode
			}
			r.mu.Lock()
			r.calls = append(r.calls, call)
			r.mu.Unlock()
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// parseRequest turns a request into RBAC's view (verb, group, resource, subresource,
// namespace, name); discovery and other non-resource requests report false.
func parseRequest(component string, req *http.Request) (observedCall, bool) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return observedCall{}, false
	}
	c := apiCall{component: component, group: group}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		c.namespace, parts = parts[1], parts[2:]
	}
	c.resource = parts[0]
	if len(parts) > 1 {
		c.name = parts[1]
	}
	// As the API server does: a list or watch of one name (field selector metadata.name=<name>)
	// is checked against rules naming it.
	if c.name == "" && req.Method == http.MethodGet {
		if sel, err := fields.ParseSelector(req.URL.Query().Get("fieldSelector")); err == nil {
			if name, ok := sel.RequiresExactMatch("metadata.name"); ok {
				c.name = name
			}
		}
	}
	if len(parts) > 2 {
		c.subresource = parts[2]
	}
	switch req.Method {
	case http.MethodGet:
		c.verb = "get"
		if len(parts) == 1 {
			c.verb = "list"
			if w := req.URL.Query().Get("watch"); w == "true" || w == "1" {
				c.verb = "watch"
			}
		}
	case http.MethodPost:
		c.verb = "create"
	case http.MethodPut:
		c.verb = "update"
	case http.MethodPatch:
		c.verb = "patch"
	case http.MethodDelete:
		c.verb = "delete"
		if c.name == "" {
			c.verb = "deletecollection"
		}
	default:
		c.verb = strings.ToLower(req.Method)
	}
	return observedCall{apiCall: c, path: req.Method + " " + req.URL.RequestURI()}, true
}

// listed reports whether a row of the table covers the observed call: same component, verb,
// group, resource and subresource; the row's namespace "" covers every namespace; a row with a
// name covers only that name.
func listed(o apiCall) bool {
	return slices.ContainsFunc(apiCalls, func(c apiCall) bool {
		return c.component == o.component && c.verb == o.verb && c.group == o.group && c.resource == o.resource &&
			c.subresource == o.subresource && (c.namespace == "" || c.namespace == o.namespace) && (c.name == "" || c.name == o.name)
	})
}

// configAs is the test API server's admin config impersonating component's ServiceAccount,
// with every request recorded.
func configAs(base *rest.Config, component string, rec *recorder) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: user(component),
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + mcoNS, "system:authenticated"},
	}
	cfg.Wrap(rec.RoundTrip)
	return cfg
}

// noSystemd stands in for the node's systemd: the agent's unit operations succeed and do nothing.
type noSystemd struct{}

func (noSystemd) Enable(context.Context, ...string) error         { return nil }
func (noSystemd) Disable(context.Context, ...string) error        { return nil }
func (noSystemd) Preset(context.Context, ...string) error         { return nil }
func (noSystemd) IsEnabled(context.Context, string) (bool, error) { return false, nil }
func (noSystemd) Reload(context.Context, string) error            { return nil }
func (noSystemd) Restart(context.Context, string) error           { return nil }
func (noSystemd) DaemonReload(context.Context) error              { return nil }

// TestObservedCallsAreListed runs the controller, the server and one node agent in process,
// each as its own ServiceAccount under the shipped RBAC, through one update that needs a
// drain, and records every request they send. Every request must be a row of the table and
// none may be refused. Rows never observed (paths this scenario does not take: garbage
// collection, CA rotation, boot images, ...) are logged.
func TestObservedCallsAreListed(t *testing.T) {
	e := requireEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin := e.Client
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	recs := map[string]*recorder{controller: {component: controller}, server: {component: server}, daemon: {component: daemon}}
	base := e.Config

	// What an installer leaves: OpenShift's pull secret. The pools' tokens, the serving CA,
	// its bundle and the serving certificate are the controller's to create, as on a fresh
	// install from config/default.
	pullSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ocNS, Name: "pull-secret"},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)}}
	// A pacing policy on worker with nothing to hold, so the rollout below also runs the
	// pacing path (pod informer, policy status writes).
	policy := &rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: "workers"},
		Spec: rolloutv1.MachineConfigPoolRolloutSpec{PoolSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"pools.operator.machineconfiguration.openshift.io/worker": ""}}}}
	for _, obj := range []client.Object{pullSecret, machineConfig("00-worker", ""), policy} {
		if err := admin.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	run := func(name string, f func(context.Context) error) context.CancelFunc {
		cctx, stop := context.WithCancel(ctx)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(cctx); err != nil && cctx.Err() == nil {
				t.Errorf("%s stopped: %v", name, err)
			}
		}()
		return stop
	}

	ca0, _ := userdata.ParseCASource("configmap:" + mcoNS + "/machine-config-server-ca")
	servingNames, err := servingcert.ParseNames([]string{"mcs.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := mcc.NewManager(configAs(base, controller, recs[controller]), mcc.Options{
		MetricsAddr: "0", ProbeAddr: "0", LeaderElection: true, LeaderElectionNamespace: mcoNS,
		UserData: &userdata.Options{MachineAPINamespace: mapiNS, ServerNamespace: mcoNS, ServerHost: "mcs.example.com",
			CA: ca0, SpecVersion: *semver.New("3.4.0")},
		// As `mco controller` runs by default (--boot-images).
		BootImages: &bootimagecontroller.Options{MachineAPINamespace: mapiNS, BootImagesNamespace: mcoNS,
			DefaultArchitecture: "amd64", StubSpecVersion: *semver.New("3.4.0")},
		// Always on in `mco controller`, with its default policy.
		ServerTokens: &servertokencontroller.Options{Namespace: mcoNS,
			Policy: servertoken.Policy{Lifetime: servertoken.DefaultLifetime, Overlap: servertoken.DefaultOverlap}},
		// On whenever --server-host is set (the names default to its host).
		ServingCert: &servingcertcontroller.Options{Namespace: mcoNS, Names: servingNames, Policy: servingcert.DefaultPolicy()},
		// Always set by `mco controller`; runs here since the test API server serves ClusterOperators.
		ClusterOperator: &clusteroperatorcontroller.Options{Namespace: mcoNS, Version: "observed"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer run("controller", mgr.Start)()

	store := mcs.NewStore(time.Hour)
	defer run("server", func(ctx context.Context) error {
		opts := mcs.ClusterOptions{Namespace: mcoNS, PullSecret: types.NamespacedName{Namespace: ocNS, Name: "pull-secret"}}
		return mcs.RunCluster(ctx, configAs(base, server, recs[server]), store, opts, log)
	})()

	first := waitForTarget(ctx, t, admin, "")

	// A node in the first rendered config, Ready, with a pod the drain must evict.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-0",
		Labels:      map[string]string{"node-role.kubernetes.io/worker": ""},
		Annotations: map[string]string{protocol.CurrentConfigAnnotation: first, protocol.DesiredConfigAnnotation: first, protocol.StateAnnotation: "Done"}}}
	if err := admin.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}
	if err := admin.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "workload"},
		Spec: corev1.PodSpec{NodeName: node.Name, TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{Name: "c", Image: "example.com/workload"}}}}
	if err := admin.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}

	root := t.TempDir()
	for _, d := range []string{"etc/systemd/system", "run"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, data := range map[string]string{"etc/passwd": "root:x:0:0:root:/root:/bin/sh\n", "etc/group": "root:x:0:\n"} {
		if err := os.WriteFile(filepath.Join(root, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The agent; a reboot restarts it on the same root, as a real reboot restarts its pod. Its
	// identity carries the node claim of a token bound to its pod (daemon-node-policy.yaml
	// refuses the agent's writes without it).
	agentConfig := configAs(base, daemon, recs[daemon])
	agentConfig.Impersonate.Extra = map[string][]string{nodeNameClaim: {node.Name}}
	restart := make(chan struct{}, 1)
	var agentMu sync.Mutex
	var stopAgent context.CancelFunc
	startAgent := func() {
		agentMu.Lock()
		defer agentMu.Unlock()
		stopAgent = run("agent", func(ctx context.Context) error {
			return agent.Run(ctx, agentConfig, agent.Options{
				NodeName: node.Name, Root: root, DriftInterval: time.Second, Log: log,
				Systemd: noSystemd{}, OS: osimage.None{},
				Rebooter: reboot.Func(func(context.Context, string) error { restart <- struct{}{}; return nil }),
			})
		})
	}
	startAgent()
	defer func() { agentMu.Lock(); stopAgent(); agentMu.Unlock() }()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-restart:
				agentMu.Lock()
				stopAgent()
				agentMu.Unlock()
				startAgent()
			}
		}
	}()

	// The update: a registries.conf change that drains the node (blocking a registry is not one
	// of the changes the Special policy applies without a drain).
	if err := admin.Create(ctx, machineConfig("99-worker-registries", "/etc/containers/registries.conf")); err != nil {
		t.Fatal(err)
	}
	second := waitForTarget(ctx, t, admin, first)
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var pool mcfgv1.MachineConfigPool
		if err := admin.Get(ctx, client.ObjectKey{Name: "worker"}, &pool); err != nil {
			return false, err
		}
		return pool.Status.Configuration.Name == second && pool.Status.UpdatedMachineCount == 1, nil
	})
	if err != nil {
		var n corev1.Node
		_ = admin.Get(context.Background(), client.ObjectKey{Name: node.Name}, &n)
		t.Fatalf("worker-0 did not reach %s: %v; node annotations %v", second, err, n.Annotations)
	}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}); err == nil {
		t.Error("the drain did not evict the workload pod")
	}
	t.Run("the pacing policy records the worker rollout under the shipped RBAC", func(t *testing.T) {
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			var got rolloutv1.MachineConfigPoolRollout
			if err := admin.Get(ctx, client.ObjectKeyFromObject(policy), &got); err != nil {
				return false, err
			}
			e := got.Status.Pools
			return len(e) == 1 && e[0].Name == "worker" && e[0].Target == second && e[0].Phase == rolloutv1.PhaseDone, nil
		})
		if err != nil {
			t.Fatalf("mcprollout/workers never recorded worker Done on %s: %v", second, err)
		}
	})
	t.Run("a fresh install serves nothing without a token", func(t *testing.T) {
		checkServesOnlyWithToken(ctx, t, admin, store, log)
	})
	t.Run("a fresh install has a serving certificate the pointer configs trust", func(t *testing.T) {
		checkServingCertificate(ctx, t, admin)
	})
	t.Run("on OpenShift the controller keeps ClusterOperator machine-config", func(t *testing.T) {
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			var co configv1.ClusterOperator
			if err := admin.Get(ctx, client.ObjectKey{Name: "machine-config"}, &co); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return len(co.Status.Conditions) > 0 && len(co.Status.RelatedObjects) > 0 && co.Status.RelatedObjects[0].Name == mcoNS, nil
		})
		if err != nil {
			t.Fatalf("ClusterOperator machine-config never got its status: %v", err)
		}
	})
	t.Run("a ContainerRuntimeConfig and an ImageDigestMirrorSet become their MachineConfigs under the shipped RBAC", func(t *testing.T) {
		checkContainerRuntime(ctx, t, admin)
	})
	t.Run("a KubeletConfig becomes its MachineConfig under the shipped RBAC", func(t *testing.T) {
		checkKubeletConfig(ctx, t, admin)
	})
	time.Sleep(time.Second) // let the event broadcasters flush
	cancel()
	wg.Wait()

	seen := map[apiCall]bool{}
	for _, comp := range []string{controller, server, daemon} {
		r := recs[comp]
		r.mu.Lock()
		calls := slices.Clone(r.calls)
		r.mu.Unlock()
		if len(calls) == 0 {
			t.Errorf("%s sent no requests", comp)
		}
		for _, c := range calls {
			if c.status == http.StatusForbidden {
				t.Errorf("%s was refused %s (%s)", comp, c.apiCall, c.path)
			}
			if !listed(c.apiCall) {
				t.Errorf("%s sent %s, which rbac_calls_test.go does not list: add the row and the rule (%s)", comp, c.apiCall, c.path)
			}
			for _, row := range apiCalls {
				r := row
				r.by = ""
				o := c.apiCall
				if r.name == "" {
					o.name = ""
				}
				if r.namespace == "" {
					o.namespace = ""
				}
				if o == r {
					seen[r] = true
				}
			}
		}
	}
	var unseen []string
	for _, row := range apiCalls {
		r := row
		r.by = ""
		if !seen[r] {
			unseen = append(unseen, fmt.Sprintf("%s (%s)", r, row.by))
		}
	}
	t.Logf("%d of %d table rows observed; not exercised by this scenario:\n  %s", len(apiCalls)-len(unseen), len(apiCalls), strings.Join(unseen, "\n  "))
}

// checkServesOnlyWithToken proves, with the manifests of config/default applied and the
// controller and the server running under their ServiceAccounts, that the server as shipped
// (server.yaml passes no --allow-unauthenticated; the handler's default) answers /config/<pool>
// only with the token the controller created: 403 without it for every pool, 200 with it.
func checkServesOnlyWithToken(ctx context.Context, t *testing.T, admin client.Client, store *mcs.Store, log *slog.Logger) {
	server := find(t, "DaemonSet", mcoNS, "mco-server")
	containers, _, _ := unstructured.NestedSlice(server.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		args, _, _ := unstructured.NestedStringSlice(c.(map[string]any), "args")
		for _, a := range args {
			if strings.HasPrefix(a, "--allow-unauthenticated") {
				t.Fatalf("config/default's server runs with %s", a)
			}
		}
	}
	handler := mcs.NewHandler(store, nil, log)
	get := func(pool, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/config/"+pool, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		req.Header.Set("Accept", "application/vnd.coreos.ignition+json;version=3.4.0")
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		return rec
	}
	// The controller's token reaches the Secret, the worker pointer config and the server.
	var token string
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var secret, pointer corev1.Secret
		if err := admin.Get(ctx, client.ObjectKey{Namespace: mcoNS, Name: protocol.ServerTokenSecretName("worker")}, &secret); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if !protocol.IsManagedServerToken(secret.Labels) {
			return false, fmt.Errorf("Secret %s lacks the managed label: labels %v", secret.Name, secret.Labels)
		}
		token = string(secret.Data[protocol.ServerTokenKey])
		if err := admin.Get(ctx, client.ObjectKey{Namespace: mapiNS, Name: protocol.ManagedUserDataSecretName("worker")}, &pointer); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return token != "" && strings.Contains(string(pointer.Data[protocol.UserDataKey]), "Bearer "+token) &&
			get("worker", token).Code == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("the controller's worker token never reached its Secret, the pointer config and the server: %v", err)
	}
	// The server read the pull secret under its RBAC and serves it.
	if served := get("worker", token); !strings.Contains(served.Body.String(), mcs.PullSecretPath) {
		t.Errorf("served worker config lacks %s", mcs.PullSecretPath)
	}
	var pools mcfgv1.MachineConfigPoolList
	if err := admin.List(ctx, &pools); err != nil {
		t.Fatal(err)
	}
	if len(pools.Items) < 2 {
		t.Fatalf("config/default installed %d pools, want master and worker", len(pools.Items))
	}
	for _, p := range pools.Items {
		for _, presented := range []string{"", "guessed-token"} {
			if rec := get(p.Name, presented); rec.Code != http.StatusForbidden || rec.Body.Len() != 0 {
				t.Errorf("GET /config/%s with token %q: %d (%d body bytes), want an empty 403", p.Name, presented, rec.Code, rec.Body.Len())
			}
		}
	}
}

// waitForTarget waits until the worker pool targets a rendered config other than previous.
// checkKubeletConfig: a KubeletConfig on the worker pool gets its MachineConfig and is
// Accepted (the APIServer API is served here, so the controller's APIServer informer runs too).
func checkKubeletConfig(ctx context.Context, t *testing.T, admin client.Client) {
	kc := &mcfgv1.KubeletConfig{ObjectMeta: metav1.ObjectMeta{Name: "max-pods"}, Spec: mcfgv1.KubeletConfigSpec{
		MachineConfigPoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pools.operator.machineconfiguration.openshift.io/worker": ""}},
		KubeletConfig:             &runtime.RawExtension{Raw: []byte(`{"maxPods":100}`)}}}
	if err := admin.Create(ctx, kc); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(kc), kc); err != nil {
			return false, err
		}
		var mc mcfgv1.MachineConfig
		if err := admin.Get(ctx, client.ObjectKey{Name: "99-worker-generated-kubelet"}, &mc); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		n := len(kc.Status.Conditions)
		return n > 1 && kc.Status.Conditions[n-2].Type == mcfgv1.KubeletConfigAccepted && kc.Status.Conditions[n-2].Status == corev1.ConditionTrue &&
			strings.Contains(string(mc.Spec.Config.Raw), "kubelet.conf"), nil
	})
	if err != nil {
		t.Fatalf("KubeletConfig max-pods not accepted with its MachineConfig: %v; status %+v", err, kc.Status)
	}
}

func waitForTarget(ctx context.Context, t *testing.T, c client.Client, previous string) string {
	t.Helper()
	var target string
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var pool mcfgv1.MachineConfigPool
		if err := c.Get(ctx, client.ObjectKey{Name: "worker"}, &pool); err != nil {
			return false, err
		}
		target = pool.Spec.Configuration.Name
		return target != "" && target != previous, nil
	})
	if err != nil {
		t.Fatalf("worker pool never targeted a new rendered config (after %q): %v", previous, err)
	}
	return target
}

// machineConfig is a worker MachineConfig with one file at path, or none.
func machineConfig(name, path string) *mcfgv1.MachineConfig {
	ign := `{"ignition":{"version":"3.5.0"}}`
	if path != "" {
		ign = `{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"` + path + `","mode":420,"contents":{"source":"data:,%5B%5Bregistry%5D%5D%0Alocation%20%3D%20%22blocked.example.com%22%0Ablocked%20%3D%20true%0A"}}]}}`
	}
	return &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{protocol.RoleLabel: "worker"}},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(ign)}},
	}
}

// checkServingCertificate: with no certificate supplied, the controller (under its shipped
// RBAC) issued the one the server mounts, for the --server-host name, chaining to the bundle it
// published, and the worker pointer config carries that bundle.
func checkServingCertificate(ctx context.Context, t *testing.T, admin client.Client) {
	var tlsSecret, pointer corev1.Secret
	var bundle corev1.ConfigMap
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for key, obj := range map[client.ObjectKey]client.Object{
			{Namespace: mcoNS, Name: "machine-config-server-tls"}:                   &tlsSecret,
			{Namespace: mcoNS, Name: "machine-config-server-ca"}:                    &bundle,
			{Namespace: mapiNS, Name: protocol.ManagedUserDataSecretName("worker")}: &pointer,
		} {
			if err := admin.Get(ctx, key, obj); err != nil {
				return false, client.IgnoreNotFound(err)
			}
		}
		return strings.Contains(string(pointer.Data[protocol.UserDataKey]), base64.StdEncoding.EncodeToString([]byte(bundle.Data["ca-bundle.crt"]))), nil
	})
	if err != nil {
		t.Fatalf("no serving certificate, bundle and pointer config carrying it: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(bundle.Data["ca-bundle.crt"])) {
		t.Fatal("published bundle holds no certificate")
	}
	pair, err := tls.X509KeyPair(tlsSecret.Data[corev1.TLSCertKey], tlsSecret.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		t.Fatalf("machine-config-server-tls: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "mcs.example.com", Roots: roots}); err != nil {
		t.Errorf("serving certificate does not verify for mcs.example.com against the published bundle: %v", err)
	}
}
