package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/dev/nodesim"
	"github.com/mco-dev/mco/internal/pacing"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// The pacing tests walk the fake pacingClock through soaks and windows; they run one at a
// time (no t.Parallel) since they share it. After a step, poke wakes the controller, as the
// requeue it asked for would in real time.

const paceLabel = "pacing.test.mco.dev/pool"

// pacedPool makes pool role with n simulated nodes Done on oldCfg, labelled for a policy.
func pacedPool(t *testing.T, ctx context.Context, role string, n int, maxUnavailable int32, oldCfg string) []string {
	t.Helper()
	mu := intstr.FromInt32(maxUnavailable)
	newPool(t, ctx, role, role, oldCfg, &mu)
	editPool(t, ctx, role, func(p *mcfgv1.MachineConfigPool) { p.Labels = map[string]string{paceLabel: role} })
	nodes := createNodes(t, ctx, role, n, oldCfg, map[string]string{roleLabel(role): ""})
	waitPool(t, ctx, role, "nodes on the old config", 30*time.Second, updatedTo(oldCfg, int32(n)))
	return nodes
}

func newPolicy(t *testing.T, ctx context.Context, name, pool string, edit func(*rolloutv1.MachineConfigPoolRolloutSpec)) {
	t.Helper()
	p := &rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: rolloutv1.MachineConfigPoolRolloutSpec{PoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{paceLabel: pool}}}}
	if edit != nil {
		edit(&p.Spec)
	}
	if err := k8sClient.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
}

func annotatePolicy(t *testing.T, ctx context.Context, name, key, value string) {
	t.Helper()
	p := &rolloutv1.MachineConfigPoolRollout{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(p.DeepCopy())
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[key] = value
	if err := k8sClient.Patch(ctx, p, patch); err != nil {
		t.Fatal(err)
	}
}

// poke wakes the node controller for the policy's pools after the clock moved.
func poke(t *testing.T, ctx context.Context, policy string) {
	t.Helper()
	annotatePolicy(t, ctx, policy, "test.mco.dev/poke", fmt.Sprint(time.Now().UnixNano()))
}

func step(d time.Duration) { pacingClock.SetTime(pacingClock.Now().Add(d)) }

// waitEntry polls the policy until its entry for pool satisfies cond.
func waitEntry(t *testing.T, ctx context.Context, policy, pool, what string, cond func(rolloutv1.PoolRolloutStatus) bool) rolloutv1.PoolRolloutStatus {
	t.Helper()
	var p rolloutv1.MachineConfigPoolRollout
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: policy}, &p); err == nil {
			if e := pacing.PoolEntry(&p.Status, pool); e != nil && cond(*e) {
				return *e
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("mcprollout/%s: timed out waiting for %s; status %+v", policy, what, p.Status)
	return rolloutv1.PoolRolloutStatus{}
}

func phase(ph rolloutv1.Phase, reason string) func(rolloutv1.PoolRolloutStatus) bool {
	return func(e rolloutv1.PoolRolloutStatus) bool {
		return e.Phase == ph && strings.Contains(e.Reason, reason)
	}
}

// targeted counts the nodes pointed at cfg.
func targeted(t *testing.T, ctx context.Context, nodes []string, cfg string) int {
	t.Helper()
	n := 0
	for _, name := range nodes {
		if getNode(t, ctx, name).Annotations[protocol.DesiredConfigAnnotation] == cfg {
			n++
		}
	}
	return n
}

// holds checks for a while that no more than want nodes get pointed at cfg.
func holds(t *testing.T, ctx context.Context, nodes []string, cfg string, want int) {
	t.Helper()
	for range 10 {
		if got := targeted(t, ctx, nodes, cfg); got != want {
			t.Fatalf("%d nodes targeted at %s, want %d held", got, cfg, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestPacingCanaryThenSoakedBatches(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pacingClock.SetTime(time.Date(2026, 6, 13, 14, 0, 0, 0, time.UTC))
	const role, oldCfg, newCfg = "pace-soak", "rendered-pace-soak-old", "rendered-pace-soak-new"
	nodes := pacedPool(t, ctx, role, 5, 2, oldCfg)
	newPolicy(t, ctx, role, role, func(s *rolloutv1.MachineConfigPoolRolloutSpec) {
		s.Canary = &rolloutv1.Canary{Nodes: intstr.FromInt32(1)}
		s.Soak = metav1.Duration{Duration: 30 * time.Minute}
	})
	setTarget(t, ctx, role, newCfg)

	e := waitEntry(t, ctx, role, role, "the canary done and soaking", phase(rolloutv1.PhaseCanary, "canary done: waiting for `mco rollout resume` or soak (30m left)"))
	if e.Batch != 1 || e.Target != newCfg || e.BatchFinishedAt == nil || !e.BatchFinishedAt.Time.Equal(pacingClock.Now()) || e.NodesDone != 1 || e.NodesRemaining != 4 {
		t.Fatalf("canary entry %+v", e)
	}
	holds(t, ctx, nodes, newCfg, 1) // maxUnavailable 2 would allow a second

	step(20 * time.Minute)
	poke(t, ctx, role)
	waitEntry(t, ctx, role, role, "10 minutes of soak left", phase(rolloutv1.PhaseCanary, "(10m left)"))
	holds(t, ctx, nodes, newCfg, 1)

	step(11 * time.Minute)
	poke(t, ctx, role)
	e = waitEntry(t, ctx, role, role, "batch 2 soaking", phase(rolloutv1.PhaseSoaking, "soaking batch 2 until 15:01; 3/5 updated"))
	if got := targeted(t, ctx, nodes, newCfg); got != 3 || e.Batch != 2 {
		t.Fatalf("after batch 2: %d nodes targeted, entry %+v; want 3 (canary + maxUnavailable 2) and batch 2", got, e)
	}

	step(31 * time.Minute)
	poke(t, ctx, role)
	e = waitEntry(t, ctx, role, role, "Done", phase(rolloutv1.PhaseDone, "all 5 nodes updated"))
	if e.Batch != 3 {
		t.Errorf("batches %d, want 3 (canary, 2, 3)", e.Batch)
	}
	waitPool(t, ctx, role, "the pool Updated", 30*time.Second, updatedTo(newCfg, 5))
	var policy rolloutv1.MachineConfigPoolRollout
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: role}, &policy); err != nil {
		t.Fatal(err)
	}
	if policy.Status.Phase != rolloutv1.PhaseDone || policy.Status.NodesDone != 5 || policy.Status.ObservedGeneration != policy.Generation {
		t.Errorf("summary %+v", policy.Status)
	}
}

func TestPacingHealthGateAndResume(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pacingClock.SetTime(time.Date(2026, 6, 13, 14, 0, 0, 0, time.UTC))
	const role, oldCfg, newCfg = "pace-gate", "rendered-pace-gate-old", "rendered-pace-gate-new"
	nodes := pacedPool(t, ctx, role, 3, 1, oldCfg)
	newPolicy(t, ctx, role, role, func(s *rolloutv1.MachineConfigPoolRolloutSpec) {
		s.Canary = &rolloutv1.Canary{Nodes: intstr.FromInt32(1)}
	})
	setTarget(t, ctx, role, newCfg)
	waitEntry(t, ctx, role, role, "the canary waiting for a resume", phase(rolloutv1.PhaseCanary, "canary done: waiting for `mco rollout resume`"))
	canary := ""
	for _, name := range nodes {
		if getNode(t, ctx, name).Annotations[protocol.DesiredConfigAnnotation] == newCfg {
			canary = name
		}
	}

	// The canary goes NotReady: the gate pauses the pool, and a resume does not override it.
	if err := nodesim.SetReady(ctx, k8sClient, getNode(t, ctx, canary), false); err != nil {
		t.Fatal(err)
	}
	waitEntry(t, ctx, role, role, "paused by the gate", phase(rolloutv1.PhasePaused, "paused: node "+canary+" not Ready since "))
	step(time.Minute)
	annotatePolicy(t, ctx, role, rolloutv1.ResumeAnnotation, pacingClock.Now().Format(time.RFC3339))
	time.Sleep(500 * time.Millisecond)
	waitEntry(t, ctx, role, role, "still paused after a resume", phase(rolloutv1.PhasePaused, "not Ready"))
	holds(t, ctx, nodes, newCfg, 1)

	// Ready again, but a DaemonSet pod on it is not: still paused, naming the pod.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "dns-" + canary,
		Labels:          map[string]string{pacing.DaemonSetPodLabel: "1"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "dns", UID: "dns-uid", Controller: ptrTo(true)}}},
		Spec: corev1.PodSpec{NodeName: canary, Containers: []corev1.Container{{Name: "dns", Image: "example.com/dns"}}}}
	if err := k8sClient.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if err := nodesim.SetReady(ctx, k8sClient, getNode(t, ctx, canary), true); err != nil {
		t.Fatal(err)
	}
	waitEntry(t, ctx, role, role, "paused by the DaemonSet pod", phase(rolloutv1.PhasePaused, "DaemonSet pod default/dns-"+canary+" not Ready"))
	holds(t, ctx, nodes, newCfg, 1)

	// The pod turns Ready: the resume given after the canary finished releases the rest.
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	pod.Status.Phase = corev1.PodRunning
	if err := k8sClient.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	waitEntry(t, ctx, role, role, "Done after the resume", phase(rolloutv1.PhaseDone, "all 3 nodes updated"))
	waitPool(t, ctx, role, "the pool Updated", 30*time.Second, updatedTo(newCfg, 3))
}

func TestPacingMaintenanceWindow(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pacingClock.SetTime(time.Date(2026, 6, 13, 14, 0, 0, 0, time.UTC)) // Saturday
	const role, oldCfg, newCfg = "pace-window", "rendered-pace-window-old", "rendered-pace-window-new"
	nodes := pacedPool(t, ctx, role, 2, 2, oldCfg)
	newPolicy(t, ctx, role, role, func(s *rolloutv1.MachineConfigPoolRolloutSpec) {
		s.MaintenanceWindows = []rolloutv1.MaintenanceWindow{{Days: []rolloutv1.Weekday{"Sun"}, Start: "02:00", Duration: &metav1.Duration{Duration: 2 * time.Hour}}}
	})
	setTarget(t, ctx, role, newCfg)
	e := waitEntry(t, ctx, role, role, "waiting for the window", phase(rolloutv1.PhaseWaitingForWindow, "waiting for window Sun 02:00 UTC (in 12h0m)"))
	if e.NextWindowStart == nil || !e.NextWindowStart.Time.Equal(time.Date(2026, 6, 14, 2, 0, 0, 0, time.UTC)) {
		t.Fatalf("next window %v", e.NextWindowStart)
	}
	holds(t, ctx, nodes, newCfg, 0)
	if v := testutil.ToFloat64(poolHeld.WithLabelValues(role)); v != 1 {
		t.Errorf("mco_pool_held = %v while waiting for the window, want 1 (a stall alert would fire)", v)
	}

	pacingClock.SetTime(time.Date(2026, 6, 14, 2, 30, 0, 0, time.UTC))
	poke(t, ctx, role)
	waitEntry(t, ctx, role, role, "Done inside the window", phase(rolloutv1.PhaseDone, "all 2 nodes updated"))
	waitPool(t, ctx, role, "the pool Updated", 30*time.Second, updatedTo(newCfg, 2))
	if v := testutil.ToFloat64(poolHeld.WithLabelValues(role)); v != 0 {
		t.Errorf("mco_pool_held = %v once Done, want 0", v)
	}
}

func TestPacingRefusesTwoPolicies(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const role, oldCfg, newCfg = "pace-two", "rendered-pace-two-old", "rendered-pace-two-new"
	nodes := pacedPool(t, ctx, role, 2, 2, oldCfg)
	newPolicy(t, ctx, role+"-a", role, nil)
	newPolicy(t, ctx, role+"-b", role, nil)
	setTarget(t, ctx, role, newCfg)
	want := "pool pace-two is selected by mcprollout/pace-two-a and mcprollout/pace-two-b"
	waitEntry(t, ctx, role+"-a", role, "refused in a", phase(rolloutv1.PhasePaused, want))
	waitEntry(t, ctx, role+"-b", role, "refused in b", phase(rolloutv1.PhasePaused, want))
	holds(t, ctx, nodes, newCfg, 0)

	if err := k8sClient.Delete(ctx, &rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: role + "-b"}}); err != nil {
		t.Fatal(err)
	}
	waitEntry(t, ctx, role+"-a", role, "Done once one policy is left", phase(rolloutv1.PhaseDone, "all 2 nodes updated"))

	// The pool leaves the policy: its entry goes.
	editPool(t, ctx, role, func(p *mcfgv1.MachineConfigPool) { p.Labels = nil })
	deadline := time.Now().Add(30 * time.Second)
	for {
		var p rolloutv1.MachineConfigPoolRollout
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: role + "-a"}, &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Status.Pools) == 0 && p.Status.Phase == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the entry of a pool no longer selected stayed: %+v", p.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The policy as a whole: Valid says whether the spec compiles (naming the field), and the
// entry of a deleted pool goes.
func TestPacingPolicyValidAndPruned(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const role, cfg = "pace-valid", "rendered-pace-valid-a"
	newPolicy(t, ctx, role+"-bad", role+"-nothing", func(s *rolloutv1.MachineConfigPoolRolloutSpec) {
		s.MaintenanceWindows = []rolloutv1.MaintenanceWindow{{Start: "02:00", Duration: &metav1.Duration{Duration: time.Hour}, TimeZone: "Mars/Olympus"}}
	})
	waitValid(t, ctx, role+"-bad", metav1.ConditionFalse, `spec.maintenanceWindows[0].timeZone: Invalid value: "Mars/Olympus"`)

	newPolicy(t, ctx, role, role, nil)
	pacedPool(t, ctx, role, 1, 1, cfg)
	waitEntry(t, ctx, role, role, "the pool's entry", phase(rolloutv1.PhaseDone, "all 1 node updated"))
	waitValid(t, ctx, role, metav1.ConditionTrue, "paces 1 pool")
	if err := k8sClient.Delete(ctx, &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: role}}); err != nil {
		t.Fatal(err)
	}
	waitValid(t, ctx, role, metav1.ConditionTrue, "paces 0 pools")
	var p rolloutv1.MachineConfigPoolRollout
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: role}, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Status.Pools) != 0 {
		t.Errorf("the deleted pool's entry stayed: %+v", p.Status.Pools)
	}
}

func waitValid(t *testing.T, ctx context.Context, policy string, status metav1.ConditionStatus, message string) {
	t.Helper()
	var p rolloutv1.MachineConfigPoolRollout
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: policy}, &p); err == nil {
			for _, c := range p.Status.Conditions {
				if c.Type == "Valid" && c.Status == status && strings.Contains(c.Message, message) {
					return
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("mcprollout/%s: no Valid=%s with %q; conditions %+v", policy, status, message, p.Status.Conditions)
}

// A canary still updating waits for its nodes, not on the policy: mco_pool_held stays 0 so a
// stuck canary node still raises MCORolloutStalled. Once it finished and waits for a resume, it is held.
func TestCanaryUpdatingIsNotHeld(t *testing.T) {
	p, err := pacing.Compile(rolloutv1.MachineConfigPoolRolloutSpec{PoolSelector: &metav1.LabelSelector{}, Canary: &rolloutv1.Canary{Nodes: intstr.FromInt32(1)}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 6, 13, 14, 0, 0, 0, time.UTC)
	updating := pacing.State{Batch: 1, Nodes: []pacing.NodeState{{Name: "a", Progress: pacing.Updating}, {Name: "b", Progress: pacing.Pending}}}
	if d := pacing.Decide(p, updating, now); d.Phase != rolloutv1.PhaseCanary || (&paced{decision: d}).holds() {
		t.Errorf("canary updating: phase %s, held %v; want Canary, not held", d.Phase, (&paced{decision: d}).holds())
	}
	done := pacing.State{Batch: 1, Nodes: []pacing.NodeState{{Name: "a", Progress: pacing.Updated}, {Name: "b", Progress: pacing.Pending}}}
	if d := pacing.Decide(p, done, now); !(&paced{decision: d}).holds() {
		t.Errorf("canary done, waiting for a resume: not held (%s: %s)", d.Phase, d.Reason)
	}
}
