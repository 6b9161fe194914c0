package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
)

// customPoolFromFirstBoot: a machine that boots straight into the custom pool infra is
// registered by its kubelet and labelled a worker by mco dev, as an installer would, and the node controller
// labels it for infra from the config it first booted into: infra counts it from the moment
// its agent reports, worker never counts or retargets it. It adds a machine to the cluster, so
// it is the shared cluster's last step.
func customPoolFromFirstBoot(t *testing.T, ctx context.Context, cl *clustertest.Cluster, workers []string) {
	ctx, cancel := context.WithTimeout(ctx, 8*time.Minute)
	defer cancel()
	if err := cl.C.Create(ctx, devcluster.CustomPool("infra")); err != nil {
		t.Fatal(err)
	}
	_, cfg, err := scheme.NewClient(filepath.Join(cl.Dir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	const name = "infra-0" // devcluster.Join's first name for the pool
	var mu sync.Mutex
	var desired []string
	var workerCounts []int32
	record := func(list client.ObjectList, object string, seen func(client.Object)) {
		testenv.WatchNamed(t, ctx, cfg, scheme.Scheme, list, object, func(obj client.Object) {
			mu.Lock()
			defer mu.Unlock()
			seen(obj)
		})
	}
	record(&corev1.NodeList{}, name, func(obj client.Object) {
		if d := obj.GetAnnotations()[protocol.DesiredConfigAnnotation]; d != "" {
			desired = append(desired, d)
		}
	})
	record(&mcfgv1.MachineConfigPoolList{}, protocol.WorkerPool, func(obj client.Object) {
		workerCounts = append(workerCounts, obj.(*mcfgv1.MachineConfigPool).Status.MachineCount)
	})

	joined, err := devcluster.Join(ctx, cl.Dir, "infra", testenv.ToolsDir(), testenv.RequireMCO(t))
	if err != nil {
		t.Fatal(err)
	}
	if joined != name {
		t.Fatalf("joined %s, want %s", joined, name)
	}
	var infra mcfgv1.MachineConfigPool
	clustertest.Eventually(t, 2*time.Minute, "infra Updated with its machine", func() bool {
		if err := cl.C.Get(ctx, client.ObjectKey{Name: "infra"}, &infra); err != nil {
			return false
		}
		return infra.Status.MachineCount == 1 && infra.Status.UpdatedMachineCount == 1 &&
			poolcondition.IsTrue(&infra.Status, mcfgv1.MachineConfigPoolUpdated)
	})
	var node corev1.Node
	if err := cl.C.Get(ctx, client.ObjectKey{Name: name}, &node); err != nil {
		t.Fatal(err)
	}
	_, settled := node.Annotations[protocol.CustomPoolLabelsAppliedAnnotation]
	// The label's value is "": present, not merely read as "" from a missing key.
	if value, labelled := node.Labels["node-role.kubernetes.io/infra"]; !settled || !labelled || value != "" {
		t.Errorf("%s not labelled for infra: labels %v", name, node.Labels)
	}
	if first := node.Annotations[protocol.FirstPivotConfigAnnotation]; first != infra.Status.Configuration.Name {
		t.Errorf("%s first booted into %q, want infra's %s", name, first, infra.Status.Configuration.Name)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, d := range desired {
		if !strings.HasPrefix(d, "rendered-infra-") {
			t.Errorf("%s was targeted at %s", name, d)
		}
	}
	for _, c := range workerCounts {
		if c > int32(len(workers)) {
			t.Errorf("worker counted %d machines; its only ones are %v", c, workers)
		}
	}
	if len(desired) == 0 || len(workerCounts) == 0 {
		t.Errorf("the watches saw nothing (desired %v, worker counts %v): they cannot have watched the join", desired, workerCounts)
	}
}
