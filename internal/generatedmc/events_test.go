package generatedmc

import (
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestChangedMachineConfig(t *testing.T) {
	kind := mcfgv1.GroupVersion.WithKind("KubeletConfig")
	controlled := func(kind, apiVersion string) *mcfgv1.MachineConfig {
		m := mc("x", "worker", file(path, inline("a")))
		m.OwnerReferences = []metav1.OwnerReference{{Kind: kind, APIVersion: apiVersion, Name: "owner", Controller: ptr.To(true)}}
		return m
	}
	for name, tc := range map[string]struct {
		mc        *mcfgv1.MachineConfig
		owner     string
		mayBeBase bool
	}{
		"its own generated one":        {controlled("KubeletConfig", mcfgv1.GroupVersion.String()), "owner", false},
		"a rendered one":               {controlled("MachineConfigPool", mcfgv1.GroupVersion.String()), "", false},
		"another kind's, writing path": {controlled("ContainerRuntimeConfig", mcfgv1.GroupVersion.String()), "", true},
		"one writing path":             {mc("50-a", "worker", file(path, inline("a"))), "", true},
		"one writing something else":   {mc("50-a", "worker", file("/etc/motd", inline("a"))), "", false},
	} {
		if owner, mayBeBase := ChangedMachineConfig(tc.mc, kind, path); owner != tc.owner || mayBeBase != tc.mayBeBase {
			t.Errorf("%s: %q, %v; want %q, %v", name, owner, mayBeBase, tc.owner, tc.mayBeBase)
		}
	}
}
