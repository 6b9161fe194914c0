package operatorstatus

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	v1, v2 = "4.0.1", "4.0.2"
	c1, c2 = "commit-1", "commit-2"
)

// cond is what a row expects of one condition: its status, reason and message.
type cond struct {
	status          configv1.ConditionStatus
	reason, message string
}

func versions(v string) []configv1.OperandVersion {
	return []configv1.OperandVersion{{Name: OperatorVersionName, Version: v}}
}

func TestCompute(t *testing.T) {
	master, worker := pool("master"), pool("worker")
	workerDegraded := pool("worker", nodeDegraded)
	degradedLine := `MachineConfigPool worker is not ready, retrying. Status: (pool degraded: true total: 3, ready 2, updated: 3, unavailable: 1, reason: Node w-1 is degraded in rendered-worker-a: "disk full")`
	masterRolling := pool("master", rollingTo("rendered-master-b"))
	bootImageDegraded := &operatorv1.MachineConfiguration{Status: operatorv1.MachineConfigurationStatus{Conditions: []metav1.Condition{
		{Type: operatorv1.MachineConfigurationBootImageUpdateDegraded, Status: metav1.ConditionTrue, Reason: "MachineSetUpdateFailed", Message: "1 of 2 MachineSets failed"},
	}}}
	asExpected := cond{configv1.ConditionTrue, ReasonAsExpected, ""}
	notDegraded := cond{configv1.ConditionFalse, "", ""}
	noEvaluations := cond{configv1.ConditionFalse, ReasonAsExpected, ""}
	degradedPoolBlocks := cond{configv1.ConditionFalse, ReasonDegradedPool,
		"One or more machine config pools are degraded, please see `oc get mcp` for further details and resolve before upgrading"}

	for _, tc := range []struct {
		name     string
		reported string // status.versions before; "" for none
		in       Inputs
		// want
		versions      string
		available     string // message
		progressing   cond
		degraded      cond
		upgradeable   cond
		evaluations   cond
		lastSyncError string
		events        []string
	}{
		{
			name:     "new ClusterOperator, no pools: the version at once",
			in:       Inputs{},
			versions: v2, available: "Cluster has deployed [{operator 4.0.2}]",
			progressing: cond{configv1.ConditionFalse, "", "Cluster version is 4.0.2"},
			degraded:    notDegraded, upgradeable: asExpected, evaluations: noEvaluations,
			events: []string{"Normal OperatorVersionChanged: clusteroperator/machine-config version changed from [] to [{operator 4.0.2}]"},
		},
		{
			name: "settled", reported: v2,
			in:       Inputs{Pools: []mcfgv1.MachineConfigPool{worker, master}, ConfigVersions: stamped(c2, master, worker)},
			versions: v2, available: "Cluster has deployed [{operator 4.0.2}]",
			progressing: cond{configv1.ConditionFalse, "", "Cluster version is 4.0.2"},
			degraded:    notDegraded, upgradeable: asExpected, evaluations: noEvaluations,
		},
		{
			name: "a worker rollout is Progressing, naming the pool", reported: v2,
			in: Inputs{Pools: []mcfgv1.MachineConfigPool{pool("worker", rollingTo("rendered-worker-b")), master},
				ConfigVersions: stamped(c2, master)},
			versions: v2, available: "Cluster has deployed [{operator 4.0.2}]",
			progressing: cond{configv1.ConditionTrue, ReasonPoolsUpdating,
				"Cluster version is 4.0.2; MachineConfigPools updating: worker: 1 (ready 1) out of 3 nodes are updating to latest configuration rendered-worker-b"},
			degraded: notDegraded, upgradeable: asExpected, evaluations: noEvaluations,
		},
		{
			name: "a master rollout outside an upgrade: Progressing, and lastSyncError says what is awaited", reported: v2,
			in:       Inputs{Pools: []mcfgv1.MachineConfigPool{masterRolling}, ConfigVersions: stamped(c2, masterRolling)},
			versions: v2, available: "Cluster has deployed [{operator 4.0.2}]",
			progressing: cond{configv1.ConditionTrue, ReasonPoolsUpdating,
				"Cluster version is 4.0.2; MachineConfigPools updating: master: 1 (ready 1) out of 3 nodes are updating to latest configuration rendered-master-b"},
			degraded: notDegraded, upgradeable: asExpected, evaluations: noEvaluations,
			lastSyncError: "required MachineConfigPool master is not ready, retrying. Status: (total: 3, ready 1, updated: 1, unavailable: 0, degraded: 0)",
		},
		{
			name: "a degraded pool: Degraded names it, Upgradeable=False", reported: v2,
			in:       Inputs{Pools: []mcfgv1.MachineConfigPool{master, workerDegraded}, ConfigVersions: stamped(c2, master)},
			versions: v2, available: "Cluster has deployed [{operator 4.0.2}]",
			progressing: cond{configv1.ConditionFalse, "", "Error while reconciling 4.0.2"},
			degraded:    cond{configv1.ConditionTrue, ReasonRequiredPoolsFailed, "Failed to resync 4.0.2 because: " + degradedLine},
			upgradeable: degradedPoolBlocks, evaluations: noEvaluations,
			lastSyncError: degradedLine,
			events:        []string{"Warning OperatorDegraded: RequiredPoolsFailed: Failed to resync 4.0.2 because: " + degradedLine},
		},
		{
			name: "a degraded pool mid-rollout is still Progressing", reported: v2,
			in: Inputs{Pools: []mcfgv1.MachineConfigPool{master, pool("worker", rollingTo("rendered-worker-b"), nodeDegraded)},
				ConfigVersions: stamped(c2, master)},
			versions: v2, available: "Cluster has deployed [{operator 4.0.2}]",
			progressing: cond{configv1.ConditionTrue, ReasonPoolsUpdating,
				"Cluster version is 4.0.2; MachineConfigPools updating: worker: pool is degraded because nodes fail with \"1 nodes are reporting degraded status on sync\": \"Node w-1 is degraded in rendered-worker-a: \\\"disk full\\\"\""},
			degraded:    cond{configv1.ConditionTrue, ReasonRequiredPoolsFailed, "Failed to resync 4.0.2 because: " + strings.Replace(degradedLine, "ready 2, updated: 3", "ready 2, updated: 1", 1)},
			upgradeable: degradedPoolBlocks, evaluations: noEvaluations,
			lastSyncError: strings.Replace(degradedLine, "ready 2, updated: 3", "ready 2, updated: 1", 1),
			events:        []string{"Warning OperatorDegraded: RequiredPoolsFailed: Failed to resync 4.0.2 because: " + strings.Replace(degradedLine, "ready 2, updated: 3", "ready 2, updated: 1", 1)},
		},
		{
			name: "upgrade: master on a config the old controller rendered keeps the old version", reported: v1,
			in:       Inputs{Pools: []mcfgv1.MachineConfigPool{master, worker}, ConfigVersions: stamped(c1, master, worker)},
			versions: v1, available: "Cluster has deployed [{operator 4.0.1}]",
			progressing: cond{configv1.ConditionTrue, "", "Working towards 4.0.2"},
			degraded:    notDegraded, upgradeable: asExpected, evaluations: noEvaluations,
			lastSyncError: "MachineConfigPool master has not progressed to latest configuration: controller version mismatch for rendered-master-a expected commit-2 has commit-1: all 3 nodes are at latest configuration rendered-master-a, retrying",
			events:        []string{"Normal OperatorVersionChanged: clusteroperator/machine-config started a version change from [{operator 4.0.1}] to [{operator 4.0.2}]"},
		},
		{
			name: "upgrade: master rolling out the new controller's config keeps the old version", reported: v1,
			in: Inputs{Pools: []mcfgv1.MachineConfigPool{masterRolling, worker},
				ConfigVersions: map[string]string{"rendered-master-a": c1, "rendered-master-b": c2, "00-master": "", "99-master-generated-kubelet": c1}},
			versions: v1, available: "Cluster has deployed [{operator 4.0.1}]",
			progressing: cond{configv1.ConditionTrue, "", "Working towards 4.0.2"},
			degraded:    notDegraded, upgradeable: asExpected, evaluations: noEvaluations,
			lastSyncError: "MachineConfigPool master has not progressed to latest configuration: controller version mismatch for rendered-master-a expected commit-2 has commit-1: 1 (ready 1) out of 3 nodes are updating to latest configuration rendered-master-b, retrying",
			events:        []string{"Normal OperatorVersionChanged: clusteroperator/machine-config started a version change from [{operator 4.0.1}] to [{operator 4.0.2}]"},
		},
		{
			name: "upgrade: a generated source of the old controller keeps the old version", reported: v1,
			in: Inputs{Pools: []mcfgv1.MachineConfigPool{master},
				ConfigVersions: map[string]string{"rendered-master-a": c2, "00-master": "", "99-master-generated-kubelet": c1}},
			versions: v1, available: "Cluster has deployed [{operator 4.0.1}]",
			progressing: cond{configv1.ConditionTrue, "", "Working towards 4.0.2"},
			degraded:    notDegraded, upgradeable: asExpected, evaluations: noEvaluations,
			lastSyncError: "MachineConfigPool master has not progressed to latest configuration: controller version mismatch for 99-master-generated-kubelet expected commit-2 has commit-1: all 3 nodes are at latest configuration rendered-master-a, retrying",
			events:        []string{"Normal OperatorVersionChanged: clusteroperator/machine-config started a version change from [{operator 4.0.1}] to [{operator 4.0.2}]"},
		},
		{
			name: "upgrade: a rendered config without a controller version keeps the old version", reported: v1,
			in: Inputs{Pools: []mcfgv1.MachineConfigPool{master},
				ConfigVersions: map[string]string{"rendered-master-a": "", "00-master": "", "99-master-generated-kubelet": c2}},
			versions: v1, available: "Cluster has deployed [{operator 4.0.1}]",
			progressing: cond{configv1.ConditionTrue, "", "Working towards 4.0.2"},
			degraded:    notDegraded, upgradeable: asExpected, evaluations: noEvaluations,
			lastSyncError: "MachineConfigPool master has not progressed to latest configuration: rendered-master-a must be created by controller version commit-2: all 3 nodes are at latest configuration rendered-master-a, retrying",
			events:        []string{"Normal OperatorVersionChanged: clusteroperator/machine-config started a version change from [{operator 4.0.1}] to [{operator 4.0.2}]"},
		},
		{
			name: "upgrade: a missing rendered config keeps the old version", reported: v1,
			in:       Inputs{Pools: []mcfgv1.MachineConfigPool{master}, ConfigVersions: map[string]string{}},
			versions: v1, available: "Cluster has deployed [{operator 4.0.1}]",
			progressing: cond{configv1.ConditionTrue, "", "Working towards 4.0.2"},
			degraded:    notDegraded, upgradeable: asExpected, evaluations: noEvaluations,
			lastSyncError: `MachineConfigPool master has not progressed to latest configuration: machineconfig.machineconfiguration.openshift.io "rendered-master-a" not found, retrying`,
			events:        []string{"Normal OperatorVersionChanged: clusteroperator/machine-config started a version change from [{operator 4.0.1}] to [{operator 4.0.2}]"},
		},
		{
			name: "upgrade: a pool status older than its spec keeps the old version", reported: v1,
			in:       Inputs{Pools: []mcfgv1.MachineConfigPool{pool("master", generation(3))}, ConfigVersions: stamped(c2, master)},
			versions: v1, available: "Cluster has deployed [{operator 4.0.1}]",
			progressing: cond{configv1.ConditionTrue, "", "Working towards 4.0.2"},
			degraded:    notDegraded, upgradeable: asExpected, evaluations: noEvaluations,
			lastSyncError: "required MachineConfigPool master is not ready, retrying. Status: (total: 3, ready 3, updated: 3, unavailable: 0, degraded: 0)",
			events:        []string{"Normal OperatorVersionChanged: clusteroperator/machine-config started a version change from [{operator 4.0.1}] to [{operator 4.0.2}]"},
		},
		{
			name: "upgrade done: master Updated on the new controller's config, workers may lag", reported: v1,
			in: Inputs{Pools: []mcfgv1.MachineConfigPool{master, pool("worker", rollingTo("rendered-worker-b"))},
				ConfigVersions: stamped(c2, master)},
			versions: v2, available: "Cluster has deployed [{operator 4.0.2}]",
			progressing: cond{configv1.ConditionTrue, ReasonPoolsUpdating,
				"Cluster version is 4.0.2; MachineConfigPools updating: worker: 1 (ready 1) out of 3 nodes are updating to latest configuration rendered-worker-b"},
			degraded: notDegraded, upgradeable: asExpected, evaluations: noEvaluations,
			events: []string{"Normal OperatorVersionChanged: clusteroperator/machine-config version changed from [{operator 4.0.1}] to [{operator 4.0.2}]"},
		},
		{
			name: "upgrade: master done but a worker pool degraded keeps the old version", reported: v1,
			in:       Inputs{Pools: []mcfgv1.MachineConfigPool{master, workerDegraded}, ConfigVersions: stamped(c2, master)},
			versions: v1, available: "Cluster has deployed [{operator 4.0.1}]",
			progressing: cond{configv1.ConditionTrue, "", "Unable to apply 4.0.2"},
			degraded:    cond{configv1.ConditionTrue, ReasonRequiredPoolsFailed, "Unable to apply 4.0.2: " + degradedLine},
			upgradeable: degradedPoolBlocks, evaluations: noEvaluations,
			lastSyncError: degradedLine,
			events: []string{
				"Normal OperatorVersionChanged: clusteroperator/machine-config started a version change from [{operator 4.0.1}] to [{operator 4.0.2}]",
				"Warning OperatorDegraded: RequiredPoolsFailed: Unable to apply 4.0.2: " + degradedLine,
			},
		},
		{
			name: "a paused master with an update pending is Degraded", reported: v2,
			in:       Inputs{Pools: []mcfgv1.MachineConfigPool{pool("master", rollingTo("rendered-master-b"), paused)}, ConfigVersions: stamped(c2, masterRolling)},
			versions: v2, available: "Cluster has deployed [{operator 4.0.2}]",
			progressing: cond{configv1.ConditionFalse, "", "Error while reconciling 4.0.2"},
			degraded: cond{configv1.ConditionTrue, ReasonRequiredPoolsFailed,
				"Failed to resync 4.0.2 because: required MachineConfigPool master is paused and cannot sync until it is unpaused"},
			upgradeable: asExpected, evaluations: noEvaluations,
			lastSyncError: "required MachineConfigPool master is paused and cannot sync until it is unpaused",
			events:        []string{"Warning OperatorDegraded: RequiredPoolsFailed: Failed to resync 4.0.2 because: required MachineConfigPool master is paused and cannot sync until it is unpaused"},
		},
		{
			name: "a paused worker is not Degraded", reported: v2,
			in: Inputs{Pools: []mcfgv1.MachineConfigPool{master, pool("worker", rollingTo("rendered-worker-b"), paused)},
				ConfigVersions: stamped(c2, master)},
			versions: v2, available: "Cluster has deployed [{operator 4.0.2}]",
			progressing: cond{configv1.ConditionFalse, "", "Cluster version is 4.0.2"},
			degraded:    notDegraded, upgradeable: asExpected, evaluations: noEvaluations,
		},
		{
			name: "the boot image controller degraded comes first", reported: v2,
			in: Inputs{Pools: []mcfgv1.MachineConfigPool{master, workerDegraded}, ConfigVersions: stamped(c2, master),
				MachineConfiguration: bootImageDegraded},
			versions: v2, available: "Cluster has deployed [{operator 4.0.2}]",
			progressing: cond{configv1.ConditionFalse, "", "Error while reconciling 4.0.2"},
			degraded: cond{configv1.ConditionTrue, ReasonMachineConfigurationFailed,
				"Failed to resync 4.0.2 because: bootimage update failed: 1 of 2 MachineSets failed"},
			upgradeable: degradedPoolBlocks, evaluations: noEvaluations,
			lastSyncError: "bootimage update failed: 1 of 2 MachineSets failed",
			events:        []string{"Warning OperatorDegraded: MachineConfigurationFailed: Failed to resync 4.0.2 because: bootimage update failed: 1 of 2 MachineSets failed"},
		},
		{
			name: "no required pool: nothing to wait for", reported: v1,
			in:       Inputs{Pools: []mcfgv1.MachineConfigPool{pool("master", unlabelled, rollingTo("rendered-master-b"))}},
			versions: v2, available: "Cluster has deployed [{operator 4.0.2}]",
			progressing: cond{configv1.ConditionTrue, ReasonPoolsUpdating,
				"Cluster version is 4.0.2; MachineConfigPools updating: master: 1 (ready 1) out of 3 nodes are updating to latest configuration rendered-master-b"},
			degraded: notDegraded, upgradeable: asExpected, evaluations: noEvaluations,
			events: []string{"Normal OperatorVersionChanged: clusteroperator/machine-config version changed from [{operator 4.0.1}] to [{operator 4.0.2}]"},
		},
		{
			name: "fleet evaluations", reported: v2,
			in: Inputs{
				KubeletConfigs:          []mcfgv1.KubeletConfig{kubeletConfig(`{"maxPods":250}`), kubeletConfig(`{"failSwapOn":false}`)},
				ContainerRuntimeConfigs: []mcfgv1.ContainerRuntimeConfig{runtimeConfig("crun"), runtimeConfig("runc")},
			},
			versions: v2, available: "Cluster has deployed [{operator 4.0.2}]",
			progressing: cond{configv1.ConditionFalse, "", "Cluster version is 4.0.2"},
			degraded:    notDegraded, upgradeable: asExpected,
			evaluations: cond{configv1.ConditionTrue, EvaluationFailSwapOn + "::" + EvaluationRunc, ""},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Version, in.ControllerVersion, in.Namespace, in.Now = v2, c2, "mco", t0
			var current configv1.ClusterOperatorStatus
			if tc.reported != "" {
				current.Versions = versions(tc.reported)
			}
			res := Compute(current, in)
			if !res.Changed {
				t.Error("Changed = false for a status written for the first time")
			}
			if !sameVersions(res.Status.Versions, versions(tc.versions)) {
				t.Errorf("versions = %v, want %s", res.Status.Versions, tc.versions)
			}
			for typ, want := range map[configv1.ClusterStatusConditionType]cond{
				configv1.OperatorAvailable:            {configv1.ConditionTrue, ReasonAsExpected, tc.available},
				configv1.OperatorProgressing:          tc.progressing,
				configv1.OperatorDegraded:             tc.degraded,
				configv1.OperatorUpgradeable:          tc.upgradeable,
				configv1.EvaluationConditionsDetected: tc.evaluations,
			} {
				c := findCondition(res.Status.Conditions, typ)
				if c == nil {
					t.Errorf("no %s condition", typ)
					continue
				}
				if got := (cond{c.Status, c.Reason, c.Message}); got != want {
					t.Errorf("%s =\n  %+v\nwant\n  %+v", typ, got, want)
				}
				if !c.LastTransitionTime.Equal(&t0) {
					t.Errorf("%s transition time %v, want %v", typ, c.LastTransitionTime, t0)
				}
			}
			var ext map[string]string
			if err := json.Unmarshal(res.Status.Extension.Raw, &ext); err != nil {
				t.Fatalf("extension %s: %v", res.Status.Extension.Raw, err)
			}
			if got := ext[LastSyncErrorKey]; got != tc.lastSyncError {
				t.Errorf("lastSyncError =\n  %q\nwant\n  %q", got, tc.lastSyncError)
			}
			for _, p := range in.Pools {
				if ext[p.Name] != poolStatus(&p) {
					t.Errorf("extension[%s] = %q, want %q", p.Name, ext[p.Name], poolStatus(&p))
				}
			}
			var events []string
			for _, e := range res.Events {
				kind := "Normal"
				if e.Warning {
					kind = "Warning"
				}
				events = append(events, fmt.Sprintf("%s %s: %s", kind, e.Reason, e.Message))
			}
			if strings.Join(events, "\n") != strings.Join(tc.events, "\n") {
				t.Errorf("events =\n  %s\nwant\n  %s", strings.Join(events, "\n  "), strings.Join(tc.events, "\n  "))
			}
		})
	}
}

// A status computed again from the same inputs is no change (nothing to write); a flip moves
// only the flipped condition's transition time; a new message alone moves none.
func TestTransitionTimesAndNoChange(t *testing.T) {
	t1, t2, t3 := metav1.NewTime(t0.Add(time.Minute)), metav1.NewTime(t0.Add(2*time.Minute)), metav1.NewTime(t0.Add(3*time.Minute))
	master := pool("master")
	in := Inputs{Version: v2, ControllerVersion: c2, Namespace: "mco", Pools: []mcfgv1.MachineConfigPool{master, pool("worker")},
		ConfigVersions: stamped(c2, master), Now: t0}
	first := Compute(configv1.ClusterOperatorStatus{}, in)

	in.Now = t1
	again := Compute(first.Status, in)
	if again.Changed || len(again.Events) != 0 {
		t.Fatalf("same inputs: Changed = %v, events %v; want no change", again.Changed, again.Events)
	}

	in.Now = t2
	in.Pools = []mcfgv1.MachineConfigPool{master, pool("worker", nodeDegraded)}
	degraded := Compute(first.Status, in)
	if !degraded.Changed {
		t.Fatal("a pool turning Degraded is no change")
	}
	for typ, want := range map[configv1.ClusterStatusConditionType]metav1.Time{
		configv1.OperatorAvailable: t0, configv1.OperatorDegraded: t2, configv1.OperatorUpgradeable: t2,
		configv1.OperatorProgressing: t0, configv1.EvaluationConditionsDetected: t0,
	} {
		if got := findCondition(degraded.Status.Conditions, typ).LastTransitionTime; !got.Equal(&want) {
			t.Errorf("%s transition time %v, want %v", typ, got, want)
		}
	}

	in.Now = t3
	in.Pools[1].Status.Conditions[len(in.Pools[1].Status.Conditions)-1].Message = "Node w-1 is degraded: other reason"
	moved := Compute(degraded.Status, in)
	c := findCondition(moved.Status.Conditions, configv1.OperatorDegraded)
	if !moved.Changed || !strings.Contains(c.Message, "other reason") {
		t.Fatalf("new degraded reason not reported: Changed %v, %q", moved.Changed, c.Message)
	}
	if !c.LastTransitionTime.Equal(&t2) {
		t.Errorf("Degraded transition time moved to %v on a message change", c.LastTransitionTime)
	}
	if len(moved.Events) != 1 || !moved.Events[0].Warning {
		t.Errorf("a new degraded message records one warning, got %v", moved.Events)
	}
	if again := Compute(moved.Status, in); again.Changed || len(again.Events) != 0 {
		t.Errorf("still degraded the same way: Changed %v, events %v", again.Changed, again.Events)
	}
}

// The API server may hand the extension back encoded differently (key order, spacing, HTML
// escapes); equal content is no change.
func TestExtensionReencodedIsNoChange(t *testing.T) {
	in := Inputs{Version: v2, ControllerVersion: c2, Namespace: "mco",
		Pools: []mcfgv1.MachineConfigPool{pool("worker", func(p *mcfgv1.MachineConfigPool) { p.Status.Conditions = nil })}, Now: t0}
	first := Compute(configv1.ClusterOperatorStatus{}, in)
	if got := string(first.Status.Extension.Raw); !strings.Contains(got, `\u003cunknown\u003e`) {
		t.Fatalf("test needs an HTML-escaped extension, got %s", got)
	}
	status := *first.Status.DeepCopy()
	status.Extension.Raw = []byte(`{ "worker": "<unknown>" }`)
	if again := Compute(status, in); again.Changed {
		t.Errorf("re-encoded extension counted as a change: %s", again.Status.Extension.Raw)
	}
}

// Conditions another writer set are kept, in place.
func TestForeignConditionsKept(t *testing.T) {
	foreign := configv1.ClusterOperatorStatusCondition{Type: "RecentBackup", Status: configv1.ConditionTrue, LastTransitionTime: t0}
	res := Compute(configv1.ClusterOperatorStatus{Conditions: []configv1.ClusterOperatorStatusCondition{foreign}},
		Inputs{Version: v2, Namespace: "mco", Now: t0})
	if len(res.Status.Conditions) != 6 || res.Status.Conditions[0] != foreign {
		t.Errorf("conditions %v: want RecentBackup kept first, then mco's five", res.Status.Conditions)
	}
}

func TestRelatedObjects(t *testing.T) {
	refs := RelatedObjects("openshift-machine-config-operator")
	if refs[0] != (configv1.ObjectReference{Resource: "namespaces", Name: "openshift-machine-config-operator"}) {
		t.Errorf("first related object %+v, want the namespace", refs[0])
	}
	// OpenShift's operator lists these; must-gather relies on them.
	for _, want := range []configv1.ObjectReference{
		{Group: mcfgGroup, Resource: "machineconfigpools"}, {Group: mcfgGroup, Resource: "controllerconfigs"},
		{Group: mcfgGroup, Resource: "kubeletconfigs"}, {Group: mcfgGroup, Resource: "containerruntimeconfigs"},
		{Group: mcfgGroup, Resource: "machineconfigs"}, {Group: operatorGroup, Resource: "machineconfigurations"},
		{Resource: "nodes"}, {Group: rbacGroup, Resource: "clusterroles", Name: "mco-controller"},
		{Group: rbacGroup, Resource: "clusterrolebindings", Name: "mco-daemon"},
	} {
		found := false
		for _, r := range refs {
			found = found || r == want
		}
		if !found {
			t.Errorf("relatedObjects lack %+v", want)
		}
	}
}

func TestEvaluations(t *testing.T) {
	for _, tc := range []struct {
		name string
		kcs  []mcfgv1.KubeletConfig
		crcs []mcfgv1.ContainerRuntimeConfig
		want []string
	}{
		{"none", nil, nil, nil},
		{"failSwapOn true is fine", []mcfgv1.KubeletConfig{kubeletConfig(`{"failSwapOn":true}`)}, nil, nil},
		{"failSwapOn false", []mcfgv1.KubeletConfig{kubeletConfig(`{"failSwapOn":false}`)}, nil, []string{EvaluationFailSwapOn}},
		{"failSwapOn false in YAML", []mcfgv1.KubeletConfig{kubeletConfig("failSwapOn: false\n")}, nil, []string{EvaluationFailSwapOn}},
		{"undecodable kubelet config skipped", []mcfgv1.KubeletConfig{kubeletConfig(`{"failSwapOn":`)}, nil, nil},
		{"no kubelet config", []mcfgv1.KubeletConfig{{}}, nil, nil},
		{"crun is the default", nil, []mcfgv1.ContainerRuntimeConfig{runtimeConfig("crun"), {}}, nil},
		{"runc", nil, []mcfgv1.ContainerRuntimeConfig{runtimeConfig("runc")}, []string{EvaluationRunc}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Evaluations(tc.kcs, tc.crcs)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("Evaluations = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestConfigNames(t *testing.T) {
	got := ConfigNames([]mcfgv1.MachineConfigPool{pool("worker"), pool("master", rollingTo("rendered-master-b")), pool("infra", func(p *mcfgv1.MachineConfigPool) {
		p.Labels = map[string]string{"operator.machineconfiguration.openshift.io/required-for-upgrade": ""}
		p.Status.Configuration.Name = ""
	})})
	// master's current config (not its target) and its sources; worker is not required; infra
	// has no current config yet.
	if want := "rendered-master-a 00-master 99-master-generated-kubelet"; strings.Join(got, " ") != want {
		t.Errorf("ConfigNames = %q, want %q", got, want)
	}
}
