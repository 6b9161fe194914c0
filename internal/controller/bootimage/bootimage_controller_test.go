package bootimage

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	operatorv1 "github.com/openshift/api/operator/v1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/bootimage"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// optOutAfter restores the suite's state (nothing enrolled, the controller caught up) when a
// test ends, so the next test never reads a condition left over from this one.
func optOutAfter(t *testing.T) {
	t.Cleanup(func() {
		setManagers(t, context.Background(), []operatorv1.MachineManager{})
		waitCondition(t, context.Background(), bootimage.ConditionProgressing, metav1.ConditionFalse, "Boot image updates are disabled")
	})
}

func TestSelectionModes(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	optOutAfter(t)
	newMachineSet(t, ctx, "sel-gpu", map[string]string{"pool": "gpu"}, nil)
	newMachineSet(t, ctx, "sel-general", map[string]string{"pool": "general"}, nil)
	newMachineSet(t, ctx, "sel-hive", map[string]string{"pool": "gpu"}, func(ms *machinev1beta1.MachineSet) {
		ms.OwnerReferences = []metav1.OwnerReference{{APIVersion: "hive.openshift.io/v1", Kind: "MachinePool", Name: "mycluster-worker", UID: "3f1c8d52-0000-4000-8000-000000000001"}}
	})

	t.Run("explicit empty list opts everything out", func(t *testing.T) {
		setManagers(t, ctx, []operatorv1.MachineManager{})
		waitCondition(t, ctx, bootimage.ConditionProgressing, metav1.ConditionFalse, "Boot image updates are disabled")
		stillAMI(t, ctx, "sel-gpu", oldAMI, 2*time.Second)
	})

	t.Run("All", func(t *testing.T) {
		setManagers(t, ctx, all)
		waitAMI(t, ctx, "sel-gpu", newAMI)
		waitAMI(t, ctx, "sel-general", newAMI)
		waitCondition(t, ctx, bootimage.ConditionProgressing, metav1.ConditionFalse, "Reconciled 3 of 3 MachineSets (1 skipped); skipped: sel-hive (OwnedByAnotherController)")
		waitCondition(t, ctx, bootimage.ConditionDegraded, metav1.ConditionFalse, "0 of 3 MachineSets degraded")
		stillAMI(t, ctx, "sel-hive", oldAMI, time.Second)
		e := waitEvent(t, ctx, testOpts.MachineAPINamespace, "sel-gpu", ReasonBootImageUpdated)
		if e.Type != corev1.EventTypeNormal || !strings.Contains(e.Message, "rhcos-4.16") {
			t.Errorf("event %s %q", e.Type, e.Message)
		}
		mc := &operatorv1.MachineConfiguration{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: protocol.ClusterMachineConfiguration}, mc); err != nil {
			t.Fatal(err)
		}
		if got := mc.Status.ManagedBootImagesStatus.MachineManagers; len(got) != 1 || got[0].Selection.Mode != operatorv1.All {
			t.Errorf("managedBootImagesStatus = %+v", got)
		}
	})

	t.Run("Partial", func(t *testing.T) {
		setManagers(t, ctx, partial(map[string]string{"pool": "gpu"}))
		// sel-hive matches the selector but stays skipped; sel-general is not enrolled.
		waitCondition(t, ctx, bootimage.ConditionProgressing, metav1.ConditionFalse, "Reconciled 2 of 2 MachineSets (1 skipped)")
		if err := setAMI(ctx, "sel-general", oldAMI); err != nil {
			t.Fatal(err)
		}
		if err := setAMI(ctx, "sel-gpu", oldAMI); err != nil {
			t.Fatal(err)
		}
		waitAMI(t, ctx, "sel-gpu", newAMI)
		stillAMI(t, ctx, "sel-general", oldAMI, 2*time.Second)
	})

	t.Run("None", func(t *testing.T) {
		setManagers(t, ctx, none)
		waitCondition(t, ctx, bootimage.ConditionProgressing, metav1.ConditionFalse, "Boot image updates are disabled")
		if err := setAMI(ctx, "sel-gpu", oldAMI); err != nil {
			t.Fatal(err)
		}
		stillAMI(t, ctx, "sel-gpu", oldAMI, 2*time.Second)
	})

	t.Run("absent list defaults to All", func(t *testing.T) {
		setManagers(t, ctx, nil)
		waitAMI(t, ctx, "sel-gpu", newAMI)
		waitAMI(t, ctx, "sel-general", newAMI)
		waitCondition(t, ctx, bootimage.ConditionProgressing, metav1.ConditionFalse, "Reconciled 3 of 3 MachineSets (1 skipped)")
	})
}

func TestStubUpgradedBeforePatch(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	optOutAfter(t)
	const ca = "data:text/plain;charset=utf-8;base64,LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJmYWtlCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"
	stub := `{"ignition":{"config":{"append":[{"source":"https://api-int.legacy.example.com:22623/config/worker","verification":{}}]},` +
		`"security":{"tls":{"certificateAuthorities":[{"source":"` + ca + `","verification":{}}]}},"timeouts":{},"version":"2.2.0"},` +
		`"networkd":{},"passwd":{},"storage":{},"systemd":{}}`
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testOpts.MachineAPINamespace, Name: "legacy-user-data"},
		Data:       map[string][]byte{protocol.UserDataKey: []byte(stub), protocol.DisableTemplatingKey: []byte("true\n")},
	}
	if err := k8sClient.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), sec) })
	newMachineSet(t, ctx, "legacy", nil, func(ms *machinev1beta1.MachineSet) {
		ms.Spec.Template.Spec.ProviderSpec.Value.Raw = awsProviderSpec(oldAMI, "legacy-user-data")
	})
	setManagers(t, ctx, all)
	waitAMI(t, ctx, "legacy", newAMI)
	waitCondition(t, ctx, bootimage.ConditionProgressing, metav1.ConditionFalse, "Reconciled 1 of 1 MachineSets (0 skipped)")
	ms, err := getMachineSet(ctx, "legacy")
	if err != nil {
		t.Fatal(err)
	}
	if amiOf(ms) != newAMI || !strings.Contains(string(ms.Spec.Template.Spec.ProviderSpec.Value.Raw), `"legacy-user-data"`) {
		t.Fatalf("MachineSet not patched, or moved off its own Secret: %s", ms.Spec.Template.Spec.ProviderSpec.Value.Raw)
	}

	got := &corev1.Secret{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(sec), got); err != nil {
		t.Fatal(err)
	}
	if got.Annotations[protocol.StubIgnitionUpgradedToAnnotation] != "3.1.0" {
		t.Errorf("annotations %v", got.Annotations)
	}
	if _, err := time.Parse(time.RFC3339, got.Annotations[protocol.StubIgnitionUpgradedAtAnnotation]); err != nil {
		t.Errorf("upgraded-at: %v", err)
	}
	userData := got.Data[protocol.UserDataKey]
	var probe struct{ Ignition struct{ Version string } }
	if err := json.Unmarshal(userData, &probe); err != nil || probe.Ignition.Version != "3.1.0" {
		t.Fatalf("stub is not spec 3.1.0: %s", userData)
	}
	cfg, err := ignition.Parse(userData)
	if err != nil {
		t.Fatalf("upgraded stub does not validate: %v", err)
	}
	if m := cfg.Ignition.Config.Merge; len(m) != 1 || *m[0].Source != "https://api-int.legacy.example.com:22623/config/worker" {
		t.Errorf("merge source lost: %+v", m)
	}
	if cas := cfg.Ignition.Security.TLS.CertificateAuthorities; len(cas) != 1 || *cas[0].Source != ca {
		t.Errorf("CA lost: %+v", cas)
	}
	if string(got.Data[protocol.DisableTemplatingKey]) != "true\n" {
		t.Error("other keys of the Secret were touched")
	}
	waitEvent(t, ctx, testOpts.MachineAPINamespace, "legacy-user-data", ReasonStubUpgraded)
}

// TestHotLoopDetected runs a "Hive with the back door open": a goroutine that puts the old AMI
// back whenever it sees the new one. After HotLoopLimit patches the controller must give up,
// say so in the Degraded condition and the metric, and leave the MachineSet alone; opting the
// MachineSet out clears it.
func TestHotLoopDetected(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	optOutAfter(t)
	newMachineSet(t, ctx, "fought", map[string]string{"managed-by": "hive"}, nil)
	newMachineSet(t, ctx, "calm", nil, nil)

	revertCtx, stopReverting := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var reverts int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for revertCtx.Err() == nil {
			if ms, err := getMachineSet(revertCtx, "fought"); err == nil && amiOf(ms) == newAMI {
				if setAMI(revertCtx, "fought", oldAMI) == nil {
					reverts++
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	setManagers(t, ctx, all)
	cond := waitCondition(t, ctx, bootimage.ConditionDegraded, metav1.ConditionTrue, "1 of 2 MachineSets degraded: fought: refusing to patch MachineSet fought")
	stopReverting()
	wg.Wait()
	if reverts != bootimage.HotLoopLimit {
		t.Errorf("the controller patched %d times before giving up, want %d", reverts, bootimage.HotLoopLimit)
	}
	if !strings.Contains(cond.Message, "Partial") {
		t.Errorf("message does not tell the admin how to exclude it: %s", cond.Message)
	}
	waitCondition(t, ctx, bootimage.ConditionProgressing, metav1.ConditionFalse, "Reconciled 1 of 2 MachineSets (0 skipped)")
	if v := testutil.ToFloat64(degradedGauge); v != 1 {
		t.Errorf("degraded metric %v, want 1", v)
	}
	waitEvent(t, ctx, testOpts.MachineAPINamespace, "fought", ReasonHotLoop)
	stillAMI(t, ctx, "fought", oldAMI, 2*time.Second)
	waitAMI(t, ctx, "calm", newAMI)

	// The refusal is remembered outside the process.
	hist := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: testOpts.BootImagesNamespace, Name: PatchHistoryConfigMap}, hist); err != nil {
		t.Fatal(err)
	}
	if rec := bootimage.DecodePatchHistory(hist.Data)["fought"]; !rec.Refused || rec.Patches != bootimage.HotLoopLimit {
		t.Errorf("history record %+v", rec)
	}

	// The admin excludes it: Degraded clears and its history is forgotten.
	setManagers(t, ctx, partial(map[string]string{"managed-by": "nobody"}))
	waitCondition(t, ctx, bootimage.ConditionDegraded, metav1.ConditionFalse, "0 of 0 MachineSets degraded")
	if v := testutil.ToFloat64(degradedGauge); v != 0 {
		t.Errorf("degraded metric %v, want 0", v)
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(hist), hist); err != nil {
		t.Fatal(err)
	}
	if _, ok := hist.Data["fought"]; ok {
		t.Errorf("history of an opted-out MachineSet kept: %v", hist.Data)
	}
}

func TestMissingOrBrokenStream(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	optOutAfter(t)
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: testOpts.BootImagesNamespace, Name: bootimage.BootImagesConfigMap}
	if err := k8sClient.Get(ctx, key, cm); err != nil {
		t.Fatal(err)
	}
	good := cm.Data[bootimage.StreamKey]
	t.Cleanup(func() {
		_ = k8sClient.Delete(context.Background(), streamConfigMap(""))
		_ = k8sClient.Create(context.Background(), streamConfigMap(good))
	})
	if err := k8sClient.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	setManagers(t, ctx, all)
	// Without MachineSets, boot images are not needed: no ConfigMap is no problem.
	waitCondition(t, ctx, bootimage.ConditionDegraded, metav1.ConditionFalse, "0 of 0 MachineSets degraded")
	newMachineSet(t, ctx, "waiting", nil, nil)
	waitCondition(t, ctx, bootimage.ConditionDegraded, metav1.ConditionTrue, "ConfigMap openshift-machine-config-operator/coreos-bootimages not found")

	if err := k8sClient.Create(ctx, streamConfigMap(`{"stream":"rhcos-4.16","architectures":`)); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, ctx, bootimage.ConditionDegraded, metav1.ConditionTrue, "ConfigMap openshift-machine-config-operator/coreos-bootimages key stream: stream metadata is not valid JSON")
	stillAMI(t, ctx, "waiting", oldAMI, time.Second)

	fixed := streamConfigMap(good)
	if err := k8sClient.Get(ctx, key, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data = fixed.Data
	if err := k8sClient.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitAMI(t, ctx, "waiting", newAMI)
	waitCondition(t, ctx, bootimage.ConditionDegraded, metav1.ConditionFalse, "0 of 1 MachineSets degraded")
}

func TestOtherMachineConfigurationsIgnored(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	other := machineConfiguration("not-cluster", all)
	if err := k8sClient.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), other) })
	e := waitEvent(t, ctx, metav1.NamespaceDefault, "not-cluster", ReasonIgnoredConfiguration)
	if e.Type != corev1.EventTypeWarning {
		t.Errorf("event type %s", e.Type)
	}
	got := &operatorv1.MachineConfiguration{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(other), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Conditions) != 0 {
		t.Errorf("an ignored MachineConfiguration got status: %+v", got.Status.Conditions)
	}
}
