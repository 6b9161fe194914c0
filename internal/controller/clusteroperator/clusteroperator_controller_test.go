package clusteroperator

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/operatorstatus"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

func TestServed(t *testing.T) {
	empty := meta.NewDefaultRESTMapper(nil)
	if ok, err := Served(empty); ok || err != nil {
		t.Errorf("no ClusterOperator kind: got %v, %v; want false, nil", ok, err)
	}
	// mco's own config.openshift.io kinds do not make a cluster OpenShift.
	images := meta.NewDefaultRESTMapper(nil)
	images.Add(configv1.GroupVersion.WithKind("Image"), meta.RESTScopeRoot)
	if ok, err := Served(images); ok || err != nil {
		t.Errorf("config.openshift.io served without ClusterOperator: got %v, %v; want false, nil", ok, err)
	}
	served := meta.NewDefaultRESTMapper(nil)
	served.Add(configv1.GroupVersion.WithKind("ClusterOperator"), meta.RESTScopeRoot)
	if ok, err := Served(served); !ok || err != nil {
		t.Errorf("ClusterOperator kind mapped: got %v, %v; want true, nil", ok, err)
	}
}

// The controller creates the ClusterOperator, Available, with the relatedObjects must-gather
// reads, and creates it again when it is deleted.
func TestCreatesClusterOperator(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	co := waitOperator(t, ctx, "Available with relatedObjects", func(co *configv1.ClusterOperator) bool {
		return is(co, configv1.OperatorAvailable, configv1.ConditionTrue) && len(co.Status.RelatedObjects) > 0
	})
	if got := condition(co, configv1.OperatorAvailable); got.Reason != operatorstatus.ReasonAsExpected || got.Message != "Cluster has deployed [{operator 4.0.2}]" {
		t.Errorf("Available: %+v", got)
	}
	for typ, want := range map[configv1.ClusterStatusConditionType]configv1.ConditionStatus{
		configv1.OperatorProgressing: configv1.ConditionFalse, configv1.OperatorDegraded: configv1.ConditionFalse,
		configv1.OperatorUpgradeable: configv1.ConditionTrue, configv1.EvaluationConditionsDetected: configv1.ConditionFalse,
	} {
		if !is(co, typ, want) {
			t.Errorf("%s = %+v, want %s", typ, condition(co, typ), want)
		}
	}
	if got, want := co.Status.RelatedObjects[0], (configv1.ObjectReference{Resource: "namespaces", Name: testOpts.Namespace}); got != want {
		t.Errorf("relatedObjects[0] = %+v, want %+v", got, want)
	}
	if v := reportedVersion(co); v != testOpts.Version {
		t.Errorf("no pool to wait for, but reported version %q", v)
	}

	// Not deleteAndWait: the controller may create the new one before a poll sees the old gone.
	uid := co.UID
	if err := k8sClient.Delete(ctx, co); err != nil {
		t.Fatal(err)
	}
	waitOperator(t, ctx, "created again", func(co *configv1.ClusterOperator) bool {
		return co.UID != uid && is(co, configv1.OperatorAvailable, configv1.ConditionTrue)
	})
}

// A Degraded pool makes the ClusterOperator Degraded, naming the pool, and not Upgradeable;
// once the pool recovers both clear. Available never moves.
func TestDegradedPoolIsNamed(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	machineConfig(t, ctx, "rendered-infra-a", "commit-2")
	createPool(t, ctx, "infra", "rendered-infra-a", false)
	before := waitOperator(t, ctx, "settled", func(co *configv1.ClusterOperator) bool {
		return strings.Contains(string(co.Status.Extension.Raw), `"infra":"all 3 nodes are at latest configuration rendered-infra-a"`)
	})
	available := condition(before, configv1.OperatorAvailable)

	editPoolStatus(t, ctx, "infra", func(p *mcfgv1.MachineConfigPool) {
		now := metav1.Now()
		p.Status.DegradedMachineCount = 1
		poolcondition.Set(&p.Status, mcfgv1.MachineConfigPoolNodeDegraded, corev1.ConditionTrue, "1 nodes are reporting degraded status on sync",
			`Node infra-0 is degraded in rendered-infra-a: "writing /etc/x: disk full"`, now)
		poolcondition.SetDegraded(&p.Status, now)
	})
	co := waitOperator(t, ctx, "Degraded", func(co *configv1.ClusterOperator) bool {
		return is(co, configv1.OperatorDegraded, configv1.ConditionTrue)
	})
	d := condition(co, configv1.OperatorDegraded)
	if d.Reason != operatorstatus.ReasonRequiredPoolsFailed || !strings.HasPrefix(d.Message, "Failed to resync 4.0.2 because: MachineConfigPool infra is not ready") ||
		!strings.Contains(d.Message, "disk full") {
		t.Errorf("Degraded does not name the pool and its reason: %+v", d)
	}
	if u := condition(co, configv1.OperatorUpgradeable); u.Status != configv1.ConditionFalse || u.Reason != operatorstatus.ReasonDegradedPool {
		t.Errorf("Upgradeable with a degraded pool: %+v", u)
	}
	waitEvent(t, ctx, "OperatorDegraded: RequiredPoolsFailed", "MachineConfigPool infra is not ready")

	editPoolStatus(t, ctx, "infra", updatedOn("rendered-infra-a"))
	co = waitOperator(t, ctx, "no longer Degraded", func(co *configv1.ClusterOperator) bool {
		return is(co, configv1.OperatorDegraded, configv1.ConditionFalse) && is(co, configv1.OperatorUpgradeable, configv1.ConditionTrue)
	})
	if got := condition(co, configv1.OperatorAvailable); !got.LastTransitionTime.Equal(&available.LastTransitionTime) {
		t.Errorf("Available moved from %v to %v", available.LastTransitionTime, got.LastTransitionTime)
	}
}

// A pool rolling out makes the ClusterOperator Progressing, naming it; Updated ends it.
func TestPoolRolloutIsProgressing(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	machineConfig(t, ctx, "rendered-infra-a", "commit-2")
	createPool(t, ctx, "infra", "rendered-infra-a", false)
	editPoolStatus(t, ctx, "infra", func(p *mcfgv1.MachineConfigPool) {
		now := metav1.Now()
		p.Status.UpdatedMachineCount, p.Status.ReadyMachineCount = 1, 1
		poolcondition.Set(&p.Status, mcfgv1.MachineConfigPoolUpdated, corev1.ConditionFalse, "", "", now)
		poolcondition.Set(&p.Status, mcfgv1.MachineConfigPoolUpdating, corev1.ConditionTrue, "", "All nodes are updating to MachineConfig rendered-infra-b", now)
	})
	co := waitOperator(t, ctx, "Progressing", func(co *configv1.ClusterOperator) bool {
		return is(co, configv1.OperatorProgressing, configv1.ConditionTrue)
	})
	if p := condition(co, configv1.OperatorProgressing); p.Reason != operatorstatus.ReasonPoolsUpdating ||
		!strings.Contains(p.Message, "infra: 1 (ready 1) out of 3 nodes are updating") {
		t.Errorf("Progressing does not name the pool: %+v", p)
	}
	editPoolStatus(t, ctx, "infra", updatedOn("rendered-infra-a"))
	co = waitOperator(t, ctx, "done Progressing", func(co *configv1.ClusterOperator) bool {
		return is(co, configv1.OperatorProgressing, configv1.ConditionFalse)
	})
	if p := condition(co, configv1.OperatorProgressing); p.Message != "Cluster version is 4.0.2" {
		t.Errorf("Progressing after the rollout: %+v", p)
	}
}

// The upgrade rule: a new operator version is reported only once the master pool is Updated on
// a config this controller version rendered.
func TestUpgradeWaitsForMasterPool(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	machineConfig(t, ctx, "00-master", "")
	machineConfig(t, ctx, "rendered-master-a", "commit-1")
	machineConfig(t, ctx, "rendered-master-b", "commit-2")
	createPool(t, ctx, "master", "rendered-master-a", true, "00-master")
	// The previous mco reported 4.0.1; this one is 4.0.2 and master still runs the old config.
	waitOperator(t, ctx, "seeing master", func(co *configv1.ClusterOperator) bool {
		return strings.Contains(string(co.Status.Extension.Raw), `"master":"all 3 nodes are at latest configuration rendered-master-a"`)
	})
	setReportedVersion(t, ctx, "4.0.1")
	co := waitOperator(t, ctx, "working towards 4.0.2", func(co *configv1.ClusterOperator) bool {
		return condition(co, configv1.OperatorProgressing).Message == "Working towards 4.0.2"
	})
	if !strings.Contains(string(co.Status.Extension.Raw), "controller version mismatch for rendered-master-a expected commit-2 has commit-1") {
		t.Errorf("lastSyncError does not say what is awaited: %s", co.Status.Extension.Raw)
	}
	waitEvent(t, ctx, "OperatorVersionChanged", "started a version change from [{operator 4.0.1}] to [{operator 4.0.2}]")

	// The render controller of this version rendered a new config; master rolls onto it.
	editPool(t, ctx, "master", func(p *mcfgv1.MachineConfigPool) { p.Spec.Configuration.Name = "rendered-master-b" })
	editPoolStatus(t, ctx, "master", func(p *mcfgv1.MachineConfigPool) {
		now := metav1.Now()
		p.Status.ObservedGeneration = p.Generation
		p.Status.UpdatedMachineCount, p.Status.ReadyMachineCount = 1, 1
		poolcondition.Set(&p.Status, mcfgv1.MachineConfigPoolUpdated, corev1.ConditionFalse, "", "", now)
		poolcondition.Set(&p.Status, mcfgv1.MachineConfigPoolUpdating, corev1.ConditionTrue, "", "All nodes are updating to MachineConfig rendered-master-b", now)
	})
	co = waitOperator(t, ctx, "showing master's rollout", func(co *configv1.ClusterOperator) bool {
		return strings.Contains(string(co.Status.Extension.Raw), "1 (ready 1) out of 3 nodes are updating to latest configuration rendered-master-b")
	})
	if v := reportedVersion(co); v != "4.0.1" {
		t.Fatalf("master is rolling out, but version %q is reported", v)
	}
	// Nor does a later sync while master still rolls: the controller shows one more node
	// ready, so it certainly ran again (a sleep would prove nothing on a machine slow enough
	// that it had not run yet).
	editPoolStatus(t, ctx, "master", func(p *mcfgv1.MachineConfigPool) {
		p.Status.UpdatedMachineCount, p.Status.ReadyMachineCount = 2, 2
	})
	co = waitOperator(t, ctx, "showing master's progress", func(co *configv1.ClusterOperator) bool {
		return strings.Contains(string(co.Status.Extension.Raw), "2 (ready 2) out of 3 nodes are updating to latest configuration rendered-master-b")
	})
	if v, p := reportedVersion(co), condition(co, configv1.OperatorProgressing); v != "4.0.1" || p.Message != "Working towards 4.0.2" {
		t.Fatalf("master not Updated: version %q, Progressing %+v", v, p)
	}

	editPoolStatus(t, ctx, "master", updatedOn("rendered-master-b"))
	co = waitOperator(t, ctx, "reporting 4.0.2", func(co *configv1.ClusterOperator) bool { return reportedVersion(co) == "4.0.2" })
	if p := condition(co, configv1.OperatorProgressing); p.Status != configv1.ConditionFalse || p.Message != "Cluster version is 4.0.2" {
		t.Errorf("upgrade done, Progressing %+v", p)
	}
	waitEvent(t, ctx, "OperatorVersionChanged", "version changed from [{operator 4.0.1}] to [{operator 4.0.2}]")
}

// The render controller re-stamps an unchanged rendered config with its version; that alone
// completes an upgrade (the MachineConfig watch).
func TestRestampedConfigCompletesUpgrade(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	machineConfig(t, ctx, "00-master", "")
	machineConfig(t, ctx, "rendered-master-c", "commit-1")
	createPool(t, ctx, "master", "rendered-master-c", true, "00-master")
	waitOperator(t, ctx, "seeing master", func(co *configv1.ClusterOperator) bool {
		return strings.Contains(string(co.Status.Extension.Raw), `"master":"all 3 nodes are at latest configuration rendered-master-c"`)
	})
	setReportedVersion(t, ctx, "4.0.1")
	waitOperator(t, ctx, "working towards 4.0.2", func(co *configv1.ClusterOperator) bool {
		return condition(co, configv1.OperatorProgressing).Message == "Working towards 4.0.2"
	})
	mc := &mcfgv1.MachineConfig{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: "rendered-master-c"}, mc); err != nil {
		t.Fatal(err)
	}
	mc.Annotations[protocol.GeneratedByControllerVersionAnnotation] = "commit-2"
	if err := k8sClient.Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
	waitOperator(t, ctx, "reporting 4.0.2", func(co *configv1.ClusterOperator) bool { return reportedVersion(co) == "4.0.2" })
}

// Nothing changed, nothing written: events that change no status leave the ClusterOperator's
// resourceVersion alone (and a real change right after still gets through).
func TestNoWriteWhenNothingChanged(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	machineConfig(t, ctx, "rendered-infra-a", "commit-2")
	createPool(t, ctx, "infra", "rendered-infra-a", false)
	// Settled on infra alone: the earlier tests' pools, deleted when they ended, may still be
	// leaving the status on a slow machine, and that write is not one of the edits below.
	co := waitOperator(t, ctx, "settled on infra alone", func(co *configv1.ClusterOperator) bool {
		var lines map[string]string
		if json.Unmarshal(co.Status.Extension.Raw, &lines) != nil {
			return false
		}
		delete(lines, operatorstatus.LastSyncErrorKey)
		return maps.Equal(lines, map[string]string{"infra": "all 3 nodes are at latest configuration rendered-infra-a"})
	})
	before := co.ResourceVersion
	for i := range 3 {
		editPool(t, ctx, "infra", func(p *mcfgv1.MachineConfigPool) {
			p.Annotations = map[string]string{"example.com/touched": string(rune('a' + i))}
		})
	}
	// Proving that nothing happens takes a wait; a machine too slow to sync in it lets a
	// rewrite go unseen, never fails a correct controller.
	time.Sleep(2 * time.Second)
	if co = waitOperator(t, ctx, "read", func(*configv1.ClusterOperator) bool { return true }); co.ResourceVersion != before {
		t.Errorf("pool edits that change no status rewrote the ClusterOperator (resourceVersion %s -> %s): %+v", before, co.ResourceVersion, co.Status)
	}
	editPoolStatus(t, ctx, "infra", func(p *mcfgv1.MachineConfigPool) { p.Status.MachineCount = 4 })
	waitOperator(t, ctx, "rewritten after a real change", func(co *configv1.ClusterOperator) bool { return co.ResourceVersion != before })
}

// A KubeletConfig disabling failSwapOn is a fleet evaluation.
func TestEvaluationConditions(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	kc := &mcfgv1.KubeletConfig{ObjectMeta: metav1.ObjectMeta{Name: "swap"}}
	kc.Spec.KubeletConfig = &runtime.RawExtension{Raw: []byte(`{"failSwapOn":false}`)}
	if err := k8sClient.Create(ctx, kc); err != nil {
		t.Fatal(err)
	}
	co := waitOperator(t, ctx, "detecting the evaluation", func(co *configv1.ClusterOperator) bool {
		return is(co, configv1.EvaluationConditionsDetected, configv1.ConditionTrue)
	})
	if got := condition(co, configv1.EvaluationConditionsDetected).Reason; got != operatorstatus.EvaluationFailSwapOn {
		t.Errorf("EvaluationConditionsDetected reason %q", got)
	}
	deleteAndWait(t, kc)
	waitOperator(t, ctx, "clearing the evaluation", func(co *configv1.ClusterOperator) bool {
		return is(co, configv1.EvaluationConditionsDetected, configv1.ConditionFalse)
	})
}

func editPool(t *testing.T, ctx context.Context, name string, edit func(*mcfgv1.MachineConfigPool)) {
	t.Helper()
	p := &mcfgv1.MachineConfigPool{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(p.DeepCopy())
	edit(p)
	if err := k8sClient.Patch(ctx, p, patch); err != nil {
		t.Fatal(err)
	}
}

// setReportedVersion writes status.versions as an older mco would have left it.
func setReportedVersion(t *testing.T, ctx context.Context, version string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		co := &configv1.ClusterOperator{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: operatorstatus.Name}, co); err != nil {
			return err
		}
		co.Status.Versions = []configv1.OperandVersion{{Name: operatorstatus.OperatorVersionName, Version: version}}
		return k8sClient.Status().Update(ctx, co)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitEvent waits for an event on the ClusterOperator with reason and a message containing text.
func waitEvent(t *testing.T, ctx context.Context, reason, text string) {
	t.Helper()
	var seen []string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var events corev1.EventList
		if err := k8sClient.List(ctx, &events, client.InNamespace("default")); err != nil {
			return false, err
		}
		seen = seen[:0]
		for _, e := range events.Items {
			if e.InvolvedObject.Kind != "ClusterOperator" || e.InvolvedObject.Name != operatorstatus.Name {
				continue
			}
			seen = append(seen, e.Reason+": "+e.Message)
			if e.Reason == reason && strings.Contains(e.Message, text) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no event %s %q on the ClusterOperator: %v; seen %q", reason, text, err, seen)
	}
}
