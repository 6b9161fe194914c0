package bootimage

import (
	"strings"
	"testing"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func machineSet(spec string, mutate func(*machinev1beta1.MachineSet)) *machinev1beta1.MachineSet {
	ms := &machinev1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "worker-a", Namespace: "openshift-machine-api"}}
	ms.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(spec)}
	if mutate != nil {
		mutate(ms)
	}
	return ms
}

func TestDecide(t *testing.T) {
	st := loadStream(t)
	amd64 := Settings{DefaultArchitecture: "amd64"}
	for _, tc := range []struct {
		name     string
		ms       *machinev1beta1.MachineSet
		settings Settings
		skip     SkipReason
		contains string // in the new providerSpec; "" means no change
		userData string
	}{
		{name: "default architecture", ms: machineSet(awsSpec, nil), settings: amd64, contains: "ami-0f71dcd99e6a1cd53", userData: "worker-user-data"},
		{name: "arm64 from the autoscaler annotation", ms: machineSet(awsSpec, func(ms *machinev1beta1.MachineSet) {
			ms.Annotations = map[string]string{AutoscalerLabelsAnnotation: "topology.kubernetes.io/zone=a, kubernetes.io/arch=arm64"}
		}), settings: amd64, contains: "ami-0a3bc62c0a6d0e4d1", userData: "worker-user-data"},
		{name: "arm64 cluster default", ms: machineSet(awsSpec, nil), settings: Settings{DefaultArchitecture: "arm64"}, contains: "ami-0a3bc62c0a6d0e4d1", userData: "worker-user-data"},
		{name: "unknown architecture", ms: machineSet(awsSpec, func(ms *machinev1beta1.MachineSet) {
			ms.Annotations = map[string]string{AutoscalerLabelsAnnotation: "kubernetes.io/arch=mips"}
		}), settings: amd64, skip: SkipArchitecture},
		{name: "owned by another controller", ms: machineSet(awsSpec, func(ms *machinev1beta1.MachineSet) {
			ms.OwnerReferences = []metav1.OwnerReference{{APIVersion: "hive.openshift.io/v1", Kind: "MachinePool", Name: "worker", UID: "u"}}
		}), settings: amd64, skip: SkipOwned},
		{name: "windows", ms: machineSet(awsSpec, func(ms *machinev1beta1.MachineSet) {
			ms.Spec.Template.Labels = map[string]string{OSIDLabel: "Windows"}
		}), settings: amd64, skip: SkipWindows},
		{name: "up to date", ms: machineSet(with(awsSpec, "ami-0123456789abcdef0", "ami-0f71dcd99e6a1cd53"), nil), settings: amd64, userData: "worker-user-data"},
		{name: "managed user data", ms: machineSet(awsSpec, nil), settings: Settings{DefaultArchitecture: "amd64", UseManagedUserData: true},
			contains: `"name":"worker-user-data-managed"`, userData: "worker-user-data-managed"},
		{name: "managed user data on an up-to-date image", ms: machineSet(with(awsSpec, "ami-0123456789abcdef0", "ami-0f71dcd99e6a1cd53"), nil),
			settings: Settings{DefaultArchitecture: "amd64", UseManagedUserData: true}, contains: `"name":"worker-user-data-managed"`, userData: "worker-user-data-managed"},
		{name: "already on managed user data", ms: machineSet(with(awsSpec, `"worker-user-data"`, `"worker-user-data-managed"`), nil),
			settings: Settings{DefaultArchitecture: "amd64", UseManagedUserData: true}, contains: "ami-0f71dcd99e6a1cd53", userData: "worker-user-data-managed"},
		{name: "managed user data role from the template label", ms: machineSet(with(awsSpec, `"worker-user-data"`, `"custom-stub"`), func(ms *machinev1beta1.MachineSet) {
			ms.Spec.Template.Labels = map[string]string{machineRoleLabel: "infra"}
		}), settings: Settings{DefaultArchitecture: "amd64", UseManagedUserData: true}, contains: `"name":"infra-user-data-managed"`, userData: "infra-user-data-managed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decide(tc.ms, st, tc.settings)
			if err != nil {
				t.Fatal(err)
			}
			if tc.skip != "" {
				if d.Skip == nil || d.Skip.Reason != tc.skip {
					t.Fatalf("want skip %s, got %+v", tc.skip, d)
				}
				return
			}
			if d.Skip != nil {
				t.Fatalf("unexpected skip %v", d.Skip)
			}
			if (tc.contains == "") != (d.ProviderSpec == nil) || !strings.Contains(string(d.ProviderSpec), tc.contains) {
				t.Errorf("new providerSpec %s, want one containing %q", d.ProviderSpec, tc.contains)
			}
			if d.UserDataSecret != tc.userData {
				t.Errorf("user-data secret %q, want %q", d.UserDataSecret, tc.userData)
			}
		})
	}
}

func TestDecideErrors(t *testing.T) {
	st := loadStream(t)
	noSpec := machineSet("", func(ms *machinev1beta1.MachineSet) { ms.Spec.Template.Spec.ProviderSpec.Value = nil })
	if _, err := Decide(noSpec, st, Settings{DefaultArchitecture: "amd64"}); err == nil {
		t.Error("a MachineSet without providerSpec is not an error")
	}
	noRole := machineSet(with(awsSpec, `"worker-user-data"`, `"custom-stub"`), nil)
	if _, err := Decide(noRole, st, Settings{DefaultArchitecture: "amd64", UseManagedUserData: true}); err == nil {
		t.Error("switching to a managed Secret of an unknown role is not an error")
	}
}
