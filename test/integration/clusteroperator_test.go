package integration

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mcc "github.com/mco-dev/mco/internal/controller"
	clusteroperatorcontroller "github.com/mco-dev/mco/internal/controller/clusteroperator"
	"github.com/mco-dev/mco/internal/testenv"
)

// requestLog records the path of every request a manager sends.
type requestLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *requestLog) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.paths = append(l.paths, req.Method+" "+req.URL.Path)
		l.mu.Unlock()
		return next.RoundTrip(req)
	})
}

func (l *requestLog) matching(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, p := range l.paths {
		if strings.Contains(p, s) {
			out = append(out, p)
		}
	}
	return out
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// runManager runs `mco controller`'s manager (ClusterOperator controller on, as the command
// sets it) with every request recorded; stop cancels it and fails the test if it ended in error.
func runManager(t *testing.T, log *requestLog) (stop func()) {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(log.wrap)
	mgr, err := mcc.NewManager(cfg, mcc.Options{
		MetricsAddr: "0", ProbeAddr: "0",
		ClusterOperator: &clusteroperatorcontroller.Options{Namespace: "mco-integration", Version: "9.9.9"},
	})
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	syncCtx, syncCancel := context.WithTimeout(ctx, time.Minute)
	defer syncCancel()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		cancel()
		t.Fatalf("manager cache never synced: %v", <-done)
	}
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager ended with %v", err)
		}
	}
}

// On plain Kubernetes (no ClusterOperator kind) the manager starts without error and never
// asks for ClusterOperators, while its other controllers work. The other side, the same
// manager keeping clusteroperator/machine-config where the kind is served, is
// config/default's TestObservedCallsAreListed (controller-runtime refuses a second manager
// with the same controller names in one process).
func TestClusterOperatorOnlyWhereServed(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := env.Client
	pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "co-infra"}}
	pool.Spec.MachineConfigSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"machineconfiguration.openshift.io/role": "co-infra"}}
	pool.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/co-infra": ""}}
	if err := c.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Delete(context.Background(), pool); err != nil {
			t.Error(err)
		}
	}()

	if err := c.List(ctx, &configv1.ClusterOperatorList{}); !meta.IsNoMatchError(err) {
		t.Fatalf("this test needs an API server without ClusterOperators; List: %v", err)
	}
	var log requestLog
	stop := runManager(t, &log)
	// The render controller reports the pool, so the manager did its work meanwhile.
	waitRenderDegraded(ctx, t, c, pool.Name)
	time.Sleep(2 * time.Second)
	stop()
	if got := log.matching("/clusteroperators"); len(got) > 0 {
		t.Errorf("the manager asked for ClusterOperators on plain Kubernetes: %q", got)
	}
	// Nor for the APIServer whose TLS profile generated kubelet configurations follow there.
	if got := log.matching("/apiservers"); len(got) > 0 {
		t.Errorf("the manager asked for APIServers on plain Kubernetes: %q", got)
	}
	// Nor for the ClusterVersion whose release image the registries controller protects there.
	if got := log.matching("/clusterversions"); len(got) > 0 {
		t.Errorf("the manager asked for ClusterVersions on plain Kubernetes: %q", got)
	}
	if len(log.matching("/machineconfigpools")) == 0 {
		t.Error("recorded no request for pools: the recorder saw nothing")
	}
}

func waitRenderDegraded(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var p mcfgv1.MachineConfigPool
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &p); err != nil {
			return false, err
		}
		return slices.ContainsFunc(p.Status.Conditions, func(c mcfgv1.MachineConfigPoolCondition) bool {
			return c.Type == mcfgv1.MachineConfigPoolRenderDegraded && c.Status == "True"
		}), nil
	})
	if err != nil {
		t.Fatalf("pool %s never RenderDegraded: %v", name, err)
	}
}
