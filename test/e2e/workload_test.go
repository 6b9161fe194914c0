package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/dev/image"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
)

// drainKeepsTheWorkload: real pods on real kubelets through a kernel-argument rollout. A
// Deployment of 2 replicas spread over the workers starts under a PodDisruptionBudget that
// allows no disruption (minAvailable 2): the first drain waits, the node reports the drain
// blocked and `mco explain` names the pod and the budget. Relaxed to minAvailable 1, the
// rollout completes; the workload never drops below one ready replica (an independent watcher
// of the pods), every replica is evicted and replaced, and the DaemonSet's pods run again on
// every worker. (The graceful node
// shutdown of each reboot ends DaemonSet pods, so their identity after the rollout says nothing
// about the drain.) The workload is deleted when it ends.
func drainKeepsTheWorkload(t *testing.T, ctx context.Context, cl *clustertest.Cluster, workers []string) {
	ctx, cancel := context.WithTimeout(ctx, 8*time.Minute)
	defer cancel()
	c := cl.C
	labels := map[string]string{"app": "web"}
	pause := corev1.Container{Name: "pause", Image: image.PauseRef, ImagePullPolicy: corev1.PullNever}
	replicas := int32(2)
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{pause},
					// One replica per node, so a drain takes at most one.
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
							LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: corev1.LabelHostname}},
					}},
				},
			},
		},
	}
	minAvailable := intstr.FromInt32(2)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}
	dsLabels := map[string]string{"app": "node-agent"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "node-agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: dsLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: dsLabels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{pause}},
			},
		},
	}
	for _, obj := range []client.Object{deploy, pdb, ds} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := c.Delete(context.Background(), obj); err != nil {
				t.Errorf("deleting %T %s: %v", obj, obj.GetName(), err)
			}
		})
	}
	clustertest.Eventually(t, 2*time.Minute, "2 ready replicas and a DaemonSet pod on each worker", func() bool {
		return len(clustertest.ReadyPods(ctx, c, labels)) == 2 && len(clustertest.ReadyPods(ctx, c, dsLabels)) == len(workers)
	})
	before := clustertest.ReadyPods(ctx, c, labels)

	// The independent watcher: the fewest ready replicas seen while the rollout runs.
	fewest, watching := 2, sync.WaitGroup{}
	var mu sync.Mutex
	stop := make(chan struct{})
	watching.Add(1)
	go func() {
		defer watching.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			ready, err := clustertest.ListReadyPods(ctx, c, labels)
			if err != nil {
				continue // an API error is not a replica down
			}
			n := len(ready)
			mu.Lock()
			fewest = min(fewest, n)
			mu.Unlock()
		}
	}()

	previous := cl.Pool(t, ctx).Spec.Configuration.Name
	karg := &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "80-worker-workload-karg", Labels: map[string]string{protocol.RoleLabel: protocol.WorkerPool}},
		Spec:       mcfgv1.MachineConfigSpec{KernelArguments: []string{"mco.workload=1"}},
	}
	if err := c.Create(ctx, karg); err != nil {
		t.Fatal(err)
	}
	// The budget allows no eviction: the first node's drain waits with its replica on it, and
	// `mco explain` says so at once (not only after --drain-blocked-threshold, 10m).
	var blocked, victim, explained string
	clustertest.Eventually(t, 3*time.Minute, "mco explain naming the replica and its budget on a draining node", func() bool {
		var nodes corev1.NodeList
		if err := c.List(ctx, &nodes); err != nil {
			return false
		}
		for i := range nodes.Items {
			n := &nodes.Items[i]
			if !n.Spec.Unschedulable {
				continue
			}
			for _, name := range before {
				if on, ok := strings.CutSuffix(name, " on "+n.Name); ok {
					blocked, victim = n.Name, on
				}
			}
		}
		if victim == "" {
			return false
		}
		out, err := clustertest.Run(ctx, testenv.RequireMCO(t), "--kubeconfig", filepath.Join(cl.Dir, "kubeconfig"), "explain", "node/"+blocked)
		explained = string(out)
		return err == nil && strings.Contains(explained, "PodDisruptionBudget default/web") && strings.Contains(explained, "default/"+victim)
	})
	t.Logf("mco explain node/%s while its drain waits:\n%s", blocked, explained)
	if n := len(clustertest.ReadyPods(ctx, c, labels)); n != 2 {
		t.Errorf("%d ready replicas while the budget allows no eviction, want 2", n)
	}
	relax := client.MergeFrom(pdb.DeepCopy())
	pdb.Spec.MinAvailable = ptr(intstr.FromInt32(1))
	if err := c.Patch(ctx, pdb, relax); err != nil {
		t.Fatal(err)
	}
	cl.WaitUpdatedWith(t, ctx, previous, int32(len(workers)), karg.Name)
	clustertest.Eventually(t, 2*time.Minute, "2 ready replicas after the rollout", func() bool {
		return len(clustertest.ReadyPods(ctx, c, labels)) == 2
	})
	close(stop)
	watching.Wait()

	if fewest < 1 {
		t.Errorf("the workload dropped to %d ready replicas during the rollout; its budget allows no fewer than 1", fewest)
	}
	after := clustertest.ReadyPods(ctx, c, labels)
	for uid, name := range before {
		if _, ok := after[uid]; ok {
			t.Errorf("replica %s was never evicted, though its node was drained", name)
		}
	}
	clustertest.Eventually(t, 2*time.Minute, "a DaemonSet pod ready on each worker after the rollout", func() bool {
		return len(clustertest.ReadyPods(ctx, c, dsLabels)) == len(workers)
	})
}

func ptr[T any](v T) *T { return &v }
