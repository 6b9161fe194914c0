package bootimage

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	operatorv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
)

const (
	oldAMI = "ami-0123456789abcdef0"
	// newAMI is the fixture stream's x86_64 AMI in us-east-1.
	newAMI  = "ami-0f71dcd99e6a1cd53"
	timeout = 30 * time.Second
)

func awsProviderSpec(ami, userDataSecret string) []byte {
	return []byte(fmt.Sprintf(`{"apiVersion":"machine.openshift.io/v1beta1","kind":"AWSMachineProviderConfig",`+
		`"ami":{"id":%q},"instanceType":"m6i.xlarge","placement":{"availabilityZone":"us-east-1a","region":"us-east-1"},`+
		`"userDataSecret":{"name":%q},"credentialsSecret":{"name":"aws-cloud-credentials"}}`, ami, userDataSecret))
}

// newMachineSet creates an AWS MachineSet booting oldAMI from worker-user-data; mutate adjusts
// it first. It is deleted when the test ends.
func newMachineSet(t *testing.T, ctx context.Context, name string, labels map[string]string, mutate func(*machinev1beta1.MachineSet)) *machinev1beta1.MachineSet {
	t.Helper()
	sel := map[string]string{"machine.openshift.io/cluster-api-machineset": name}
	ms := &machinev1beta1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: testOpts.MachineAPINamespace, Name: name, Labels: labels},
		Spec: machinev1beta1.MachineSetSpec{
			Selector: metav1.LabelSelector{MatchLabels: sel},
			Template: machinev1beta1.MachineTemplateSpec{
				ObjectMeta: machinev1beta1.ObjectMeta{Labels: sel},
				Spec:       machinev1beta1.MachineSpec{ProviderSpec: machinev1beta1.ProviderSpec{Value: &runtime.RawExtension{Raw: awsProviderSpec(oldAMI, "worker-user-data")}}},
			},
		},
	}
	if mutate != nil {
		mutate(ms)
	}
	if err := k8sClient.Create(ctx, ms); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), ms) })
	return ms
}

func getMachineSet(ctx context.Context, name string) (*machinev1beta1.MachineSet, error) {
	ms := &machinev1beta1.MachineSet{}
	err := k8sClient.Get(ctx, client.ObjectKey{Namespace: testOpts.MachineAPINamespace, Name: name}, ms)
	return ms, err
}

func amiOf(ms *machinev1beta1.MachineSet) string {
	var spec struct {
		AMI struct {
			ID string `json:"id"`
		} `json:"ami"`
	}
	_ = json.Unmarshal(ms.Spec.Template.Spec.ProviderSpec.Value.Raw, &spec)
	return spec.AMI.ID
}

// setAMI writes a MachineSet's AMI the way an admin or another controller would: a full update.
func setAMI(ctx context.Context, name, ami string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ms, err := getMachineSet(ctx, name)
		if err != nil {
			return err
		}
		ms.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: awsProviderSpec(ami, "worker-user-data")}
		return k8sClient.Update(ctx, ms)
	})
}

func waitAMI(t *testing.T, ctx context.Context, name, ami string) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		ms, err := getMachineSet(ctx, name)
		if err == nil {
			if last = amiOf(ms); last == ami {
				return
			}
		}
	}
	t.Fatalf("MachineSet %s: AMI %s, want %s", name, last, ami)
}

// stillAMI checks a MachineSet keeps ami for a while: the controller must not touch it.
func stillAMI(t *testing.T, ctx context.Context, name, ami string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		ms, err := getMachineSet(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got := amiOf(ms); got != ami {
			t.Fatalf("MachineSet %s changed to AMI %s; it must keep %s", name, got, ami)
		}
	}
}

// setManagers sets spec.managedBootImages.machineManagers; nil removes the field. A merge
// patch, because the typed MachineConfiguration serialises empty required sub-structs the
// CRD rejects.
func setManagers(t *testing.T, ctx context.Context, managers []operatorv1.MachineManager) {
	t.Helper()
	var list any = managers
	if managers == nil {
		list = nil
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"managedBootImages": map[string]any{"machineManagers": list}}})
	if err != nil {
		t.Fatal(err)
	}
	mc := &operatorv1.MachineConfiguration{ObjectMeta: metav1.ObjectMeta{Name: protocol.ClusterMachineConfiguration}}
	if err := k8sClient.Patch(ctx, mc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// machineConfiguration builds a MachineConfiguration unstructured, for the same reason.
func machineConfiguration(name string, managers []operatorv1.MachineManager) *unstructured.Unstructured {
	spec := map[string]any{"managementState": string(operatorv1.Managed)}
	if managers != nil {
		raw, _ := json.Marshal(managers)
		var list []any
		_ = json.Unmarshal(raw, &list)
		if list == nil {
			list = []any{}
		}
		spec["managedBootImages"] = map[string]any{"machineManagers": list}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": operatorv1.GroupVersion.String(),
		"kind":       "MachineConfiguration",
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}}
}

func machineSets(sel operatorv1.MachineManagerSelector) []operatorv1.MachineManager {
	return []operatorv1.MachineManager{{Resource: operatorv1.MachineSets, APIGroup: operatorv1.MachineAPI, Selection: sel}}
}

var (
	all  = machineSets(operatorv1.MachineManagerSelector{Mode: operatorv1.All})
	none = machineSets(operatorv1.MachineManagerSelector{Mode: operatorv1.None})
)

func partial(matchLabels map[string]string) []operatorv1.MachineManager {
	return machineSets(operatorv1.MachineManagerSelector{Mode: operatorv1.Partial,
		Partial: &operatorv1.PartialSelector{MachineResourceSelector: &metav1.LabelSelector{MatchLabels: matchLabels}}})
}

// waitCondition waits until MachineConfiguration cluster has the condition with status and a
// message starting with prefix, computed for its current spec.
func waitCondition(t *testing.T, ctx context.Context, typ string, status metav1.ConditionStatus, prefix string) metav1.Condition {
	t.Helper()
	var last *metav1.Condition
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		mc := &operatorv1.MachineConfiguration{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: protocol.ClusterMachineConfiguration}, mc); err != nil {
			continue
		}
		// A condition computed before the latest spec change is stale, whatever it says.
		last = meta.FindStatusCondition(mc.Status.Conditions, typ)
		if last != nil && last.ObservedGeneration == mc.Generation && last.Status == status && strings.HasPrefix(last.Message, prefix) {
			return *last
		}
	}
	t.Fatalf("condition %s: last %+v, want %s with message %q...", typ, last, status, prefix)
	return metav1.Condition{}
}

func waitEvent(t *testing.T, ctx context.Context, namespace, object, reason string) corev1.Event {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var events corev1.EventList
		if err := k8sClient.List(ctx, &events, client.InNamespace(namespace)); err != nil {
			continue
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == object && e.Reason == reason {
				return e
			}
		}
	}
	t.Fatalf("no %s event for %s/%s", reason, namespace, object)
	return corev1.Event{}
}
