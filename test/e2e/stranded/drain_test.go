package stranded

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/dev/image"
	"github.com/mco-dev/mco/internal/drainpolicy"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
)

// blockedDrainSkipsThenDeletes: a single replica pinned to the worker the rollout takes first,
// under a PodDisruptionBudget that allows no eviction (minAvailable 1), and spec.drain
// {blockedTimeout 10s, onBlocked Skip, deleteBlockingPodsAfter 30s}. The pinned node's drain is
// skipped after 20s: it goes back to its config, uncordoned, while the other two workers update
// (never more than one unavailable); then it is tried again, and once its drain has been
// blocked 30s in all its pod is deleted (an event naming the budget) and it updates.
func blockedDrainSkipsThenDeletes(t *testing.T, ctx context.Context, cl *clustertest.Cluster) {
	c := cl.C
	before := cl.Pool(t, ctx).Spec.Configuration.Name
	var workers corev1.NodeList
	if err := c.List(ctx, &workers, client.HasLabels{clustertest.WorkerSelector}); err != nil {
		t.Fatal(err)
	}
	order := make([]*corev1.Node, len(workers.Items))
	for i := range workers.Items {
		order[i] = &workers.Items[i]
	}
	rollout.SortCandidates(order) // the node controller's order: the first is taken first
	pinned := order[0].Name

	labels := map[string]string{"app": "drain-db"}
	replicas := int32(1)
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "drain-db"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{corev1.LabelHostname: pinned},
					Containers:   []corev1.Container{{Name: "pause", Image: image.PauseRef, ImagePullPolicy: corev1.PullNever}},
				},
			},
		},
	}
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "drain-db"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}
	policy := &rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: "drain-skip"},
		Spec: rolloutv1.MachineConfigPoolRolloutSpec{
			PoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{protocol.PoolLabelPrefix + protocol.WorkerPool: ""}},
			Drain: &rolloutv1.DrainPolicy{
				BlockedTimeout:          &metav1.Duration{Duration: 10 * time.Second},
				OnBlocked:               rolloutv1.DrainSkip,
				DeleteBlockingPodsAfter: &metav1.Duration{Duration: 30 * time.Second},
			},
		}}
	mc := clustertest.FileConfig("99-drain-skip", "/etc/drain-skip", "skipped, then deleted\n")
	for _, obj := range []client.Object{deploy, pdb} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	clustertest.Eventually(t, 2*time.Minute, "the replica ready on "+pinned, func() bool {
		ready := clustertest.ReadyPods(ctx, c, labels)
		return len(ready) == 1 && strings.HasSuffix(slices.Collect(maps.Values(ready))[0], " on "+pinned)
	})
	if err := c.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	cl.Watcher.Reset()

	// What happened when, seen by polling the Nodes.
	var mu sync.Mutex
	var blockedAt, skippedAt, retriedAt time.Time
	var doneAtRetry []string // the other workers Done on the target in the list that showed the retry
	doneAt := map[string]time.Time{}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go func() {
		for clustertest.Sleep(watchCtx, 100*time.Millisecond) {
			target := ""
			if pool := drainWorkerTarget(watchCtx, c); pool != before {
				target = pool
			}
			var nodes corev1.NodeList
			if target == "" || c.List(watchCtx, &nodes, client.HasLabels{clustertest.WorkerSelector}) != nil {
				continue
			}
			mu.Lock()
			for _, n := range nodes.Items {
				a := n.Annotations
				switch {
				case n.Name == pinned && blockedAt.IsZero() && a[protocol.DrainBlockedSinceAnnotation] != "":
					blockedAt = time.Now()
				case n.Name == pinned && skippedAt.IsZero() && drainpolicy.SkippedFor(&n, target):
					skippedAt = time.Now()
				case n.Name == pinned && !skippedAt.IsZero() && retriedAt.IsZero() && a[protocol.DesiredConfigAnnotation] == target:
					retriedAt = time.Now()
					// One list is one moment of the cluster: the others must be Done in it.
					for _, o := range nodes.Items {
						if o.Name != pinned && o.Annotations[protocol.CurrentConfigAnnotation] == target &&
							o.Annotations[protocol.StateAnnotation] == string(protocol.NodeDone) {
							doneAtRetry = append(doneAtRetry, o.Name)
						}
					}
				}
				if doneAt[n.Name].IsZero() && a[protocol.CurrentConfigAnnotation] == target && a[protocol.StateAnnotation] == string(protocol.NodeDone) {
					doneAt[n.Name] = time.Now()
				}
			}
			mu.Unlock()
		}
	}()

	if err := c.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	clustertest.Eventually(t, 3*time.Minute, pinned+" skipped and uncordoned on its config", func() bool {
		n := cl.Node(t, ctx, pinned)
		return !n.Spec.Unschedulable && n.Annotations[protocol.DesiredConfigAnnotation] == before &&
			n.Annotations[protocol.StateAnnotation] == string(protocol.NodeDone) && n.Annotations[rolloutv1.DrainSkippedAnnotation] != ""
	})
	if msg := drainNodeEvent(t, ctx, c, pinned, "DrainSkipped"); !strings.Contains(msg, "spec.drain.blockedTimeout") || !strings.Contains(msg, "PodDisruptionBudget default/drain-db") {
		t.Errorf("DrainSkipped event %q does not name the policy field and the budget", msg)
	}
	if out, err := clustertest.Run(ctx, testenv.RequireMCO(t), "--kubeconfig", filepath.Join(cl.Dir, "kubeconfig"), "explain", "node/"+pinned); err != nil {
		t.Errorf("mco explain: %v", err)
	} else if !strings.Contains(string(out), "tried again after the pool's other nodes") {
		t.Errorf("mco explain node/%s while skipped does not say it is tried again later:\n%s", pinned, out)
	}

	clustertest.Eventually(t, 4*time.Minute, "the replica deleted past deleteBlockingPodsAfter", func() bool {
		return drainNodeEvent(t, ctx, c, pinned, "DrainDeletedPod") != ""
	})
	if msg := drainNodeEvent(t, ctx, c, pinned, "DrainDeletedPod"); !strings.Contains(msg, "PodDisruptionBudget default/drain-db") {
		t.Errorf("DrainDeletedPod event %q does not name the budget", msg)
	}
	deletedAt := time.Now()
	after := cl.WaitUpdated(t, ctx, before, 3)
	stopWatch()
	mu.Lock()
	t.Logf("%s: blocked at %s, skipped %s later (blockedTimeout 10s), tried again %s after the skip, its pod deleted by %s after it was tried again; pool Updated %s after the deletion",
		pinned, blockedAt.Format(time.StampMilli), skippedAt.Sub(blockedAt).Round(time.Second), retriedAt.Sub(skippedAt).Round(time.Second),
		deletedAt.Sub(retriedAt).Round(time.Second), time.Since(deletedAt).Round(time.Second))
	if retriedAt.IsZero() || len(doneAtRetry) != 2 {
		t.Errorf("%s tried again at %s with only %v Done on the target: the skipped node must come after the others (Done at %v)",
			pinned, retriedAt.Format(time.StampMilli), doneAtRetry, doneAt)
	}
	mu.Unlock()
	if most, which := cl.Watcher.MaxUnavailable(); most > 1 {
		t.Errorf("%d workers unavailable at once (%v); maxUnavailable is 1", most, which)
	}
	n := cl.Node(t, ctx, pinned)
	for _, k := range []string{rolloutv1.DrainSkippedAnnotation, rolloutv1.DrainBlockedForAnnotation, protocol.DrainBlockedSinceAnnotation} {
		if v, ok := n.Annotations[k]; ok {
			t.Errorf("%s=%q left on %s, Done on %s", k, v, pinned, after)
		}
	}

	// Back as it was: the workload, the policy and the MachineConfig gone, the pool Updated.
	for _, obj := range []client.Object{deploy, pdb, policy, mc} {
		if err := c.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	clustertest.Eventually(t, time.Minute, "the replica gone", func() bool {
		var pods corev1.PodList
		return c.List(ctx, &pods, client.InNamespace("default"), client.MatchingLabels(labels)) == nil && len(pods.Items) == 0
	})
	cl.WaitUpdated(t, ctx, after, 3)
}

// drainWorkerTarget is the worker pool's target ("" on an error).
func drainWorkerTarget(ctx context.Context, c client.Client) string {
	var p mcfgv1.MachineConfigPool
	if err := c.Get(ctx, client.ObjectKey{Name: protocol.WorkerPool}, &p); err != nil {
		return ""
	}
	return p.Spec.Configuration.Name
}

// drainNodeEvent is the newest message of the events of reason on the Node name ("" for none).
func drainNodeEvent(t *testing.T, ctx context.Context, c client.Client, name, reason string) string {
	t.Helper()
	var events corev1.EventList
	if err := c.List(ctx, &events, client.MatchingFields{"involvedObject.name": name}); err != nil {
		t.Fatal(err)
	}
	msg, newest := "", time.Time{}
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == "Node" && e.Reason == reason && !e.LastTimestamp.Time.Before(newest) {
			msg, newest = e.Message, e.LastTimestamp.Time
		}
	}
	return msg
}
