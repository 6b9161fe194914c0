package stranded

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/clientconfig"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
)

// holdKey is a second SSH key for core: applied in place, no drain or reboot, so the scenario
// costs seconds per node.
const holdKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIQabWE2/3seNMwDZZyILcVxsMxfqMoUZHtybJD7RJEK hold@example.com"

// holdAndPriority: worker-0 held with `mco hold`, worker-2 given priority 10; a rebootless
// change goes to worker-2, then worker-1, never worker-0, and the pool waits for worker-0
// (NodesHeld, neither Updated nor Degraded) until `mco hold --undo worker-0` lets it finish.
func holdAndPriority(t *testing.T, ctx context.Context, cl *clustertest.Cluster) {
	mco := testenv.RequireMCO(t)
	kubeconfig := filepath.Join(cl.Dir, "kubeconfig")
	before := cl.Pool(t, ctx).Spec.Configuration.Name
	const held, first, second = "worker-0", "worker-2", "worker-1"
	mc := sshKeyConfig("71-worker-ssh-hold", holdKey)
	// Whatever happens, the next scenario starts with no hold, priority or MachineConfig of
	// this one (idempotent; on success they are already gone).
	t.Cleanup(func() {
		ctx := context.Background()
		_ = client.IgnoreNotFound(cl.C.Delete(ctx, mc))
		setNodeAnnotation(t, ctx, cl, held, rolloutv1.HoldAnnotation, nil)
		setNodeAnnotation(t, ctx, cl, first, rolloutv1.UpdatePriorityAnnotation, nil)
	})

	out, err := clustertest.Run(ctx, mco, "hold", held, "--kubeconfig", kubeconfig)
	if err != nil || !strings.Contains(string(out), "node/"+held+": held") {
		t.Fatalf("mco hold %s: %v\n%s", held, err, out)
	}
	ten := "10"
	setNodeAnnotation(t, ctx, cl, first, rolloutv1.UpdatePriorityAnnotation, &ten)
	order := watchTargetOrder(t, ctx, kubeconfig, before)

	began := time.Now()
	if err := cl.C.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	var pool *mcfgv1.MachineConfigPool
	clustertest.Eventually(t, 3*time.Minute, "the worker pool waiting for the held node", func() bool {
		pool = cl.Pool(t, ctx)
		return pool.Spec.Configuration.Name != before && clustertest.HasSource(pool, mc.Name) &&
			pool.Status.UpdatedMachineCount == 2 && poolcondition.IsTrue(&pool.Status, poolcondition.NodesHeld)
	})
	t.Logf("two nodes updated, the held one waited for, %s after the MachineConfig", time.Since(began).Round(time.Second))
	target := pool.Spec.Configuration.Name
	if c := poolcondition.Get(&pool.Status, poolcondition.NodesHeld); !strings.Contains(c.Message, held) || !strings.Contains(c.Message, "mco hold --undo "+held) {
		t.Errorf("NodesHeld: %q, want it to name %s and how to release it", c.Message, held)
	}
	for _, c := range []mcfgv1.MachineConfigPoolConditionType{mcfgv1.MachineConfigPoolUpdated, mcfgv1.MachineConfigPoolDegraded} {
		if poolcondition.IsTrue(&pool.Status, c) {
			t.Errorf("the pool is %s while %s is held behind", c, held)
		}
	}
	if got := order(); !slices.Equal(got, []string{first, second}) {
		t.Errorf("targeted in order %v, want %s (priority 10) then %s, %s never", got, first, second, held)
	}
	if d := cl.Node(t, ctx, held).Annotations[protocol.DesiredConfigAnnotation]; d != before {
		t.Errorf("the held node was given %s", d)
	}
	var mcn mcfgv1.MachineConfigNode
	if err := cl.C.Get(ctx, client.ObjectKey{Name: held}, &mcn); err != nil || mcn.Annotations[rolloutv1.HoldAnnotation] != "true" {
		t.Errorf("MachineConfigNode %s does not show the hold: %v %v", held, err, mcn.Annotations)
	}
	if out, err := clustertest.Run(ctx, mco, "status", "--kubeconfig", kubeconfig); err != nil || !strings.Contains(string(out), "held") {
		t.Errorf("mco status does not show the hold: %v\n%s", err, out)
	}

	out, err = clustertest.Run(ctx, mco, "hold", "--undo", held, "--kubeconfig", kubeconfig)
	if err != nil || !strings.Contains(string(out), "node/"+held+": released") {
		t.Fatalf("mco hold --undo %s: %v\n%s", held, err, out)
	}
	clustertest.Eventually(t, 2*time.Minute, "the worker pool Updated once released", func() bool {
		pool = cl.Pool(t, ctx)
		return pool.Status.Configuration.Name == target && pool.Status.UpdatedMachineCount == 3 &&
			poolcondition.IsTrue(&pool.Status, mcfgv1.MachineConfigPoolUpdated)
	})
	if got := order(); !slices.Equal(got, []string{first, second, held}) {
		t.Errorf("targeted in order %v, want %s, %s, then %s once released", got, first, second, held)
	}
	if c := poolcondition.Get(&pool.Status, poolcondition.NodesHeld); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("NodesHeld once released: %+v", c)
	}
	if got := cl.NodeFile(ctx, held, "/home/core/.ssh/authorized_keys.d/ignition"); !strings.Contains(got, "hold@example.com") {
		t.Errorf("%s: core's keys are %q", held, got)
	}

	// Back as it was: the key removed, then the priority.
	if err := cl.C.Delete(ctx, mc); err != nil {
		t.Fatal(err)
	}
	clustertest.Eventually(t, 2*time.Minute, "the worker pool Updated without the key", func() bool {
		p := cl.Pool(t, ctx)
		return p.Spec.Configuration.Name != target && !clustertest.HasSource(p, mc.Name) && p.Status.Configuration.Name == p.Spec.Configuration.Name &&
			p.Status.UpdatedMachineCount == 3 && poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolUpdated)
	})
	setNodeAnnotation(t, ctx, cl, first, rolloutv1.UpdatePriorityAnnotation, nil)
	t.Logf("scenario took %s", time.Since(began).Round(time.Second))
}

// sshKeyConfig is a worker MachineConfig giving core one SSH key.
func sshKeyConfig(name, key string) *mcfgv1.MachineConfig {
	raw := `{"ignition":{"version":"3.4.0"},"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["` + key + `"]}]}}`
	return &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{protocol.RoleLabel: protocol.WorkerPool}},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(raw)}},
	}
}

// setNodeAnnotation sets (value nil: removes) one annotation of a Node by a merge patch of that
// key, as kubectl annotate does.
func setNodeAnnotation(t *testing.T, ctx context.Context, cl *clustertest.Cluster, node, key string, value *string) {
	t.Helper()
	v := "null"
	if value != nil {
		v = `"` + *value + `"`
	}
	patch := []byte(`{"metadata":{"annotations":{"` + key + `":` + v + `}}}`)
	if err := cl.C.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Errorf("annotating %s: %v", node, err)
	}
}

// watchTargetOrder records, through an API watch, the order in which workers are first pointed
// at a config other than from: every event arrives, in order, so a fast rebootless update
// cannot slip between two polls.
func watchTargetOrder(t *testing.T, ctx context.Context, kubeconfig, from string) func() []string {
	t.Helper()
	cfg, err := clientconfig.Load(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &corev1.NodeList{}, client.HasLabels{clustertest.WorkerSelector})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			n, ok := ev.Object.(*corev1.Node)
			if !ok {
				continue
			}
			if d := n.Annotations[protocol.DesiredConfigAnnotation]; d == from || d == "" {
				continue
			}
			mu.Lock()
			if !slices.Contains(order, n.Name) {
				order = append(order, n.Name)
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); <-done })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(order)
	}
}
