package containerruntime

import (
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/generatedmc/mctest"
	"github.com/mco-dev/mco/internal/protocol"
)

// The goldens in testdata/openshift were made by running OpenShift's own controller, not by
// this package: openshift/machine-config-operator at commit 7ff337a4ffac8e7562692181178ede61e4b2eec5,
// checked out outside this repository and built with its vendor/ directory (tag
// containers_image_openpgp), with a throwaway _test.go in pkg/controller/container-runtime-config
// that drives Controller.syncContainerRuntimeConfig through the package's fake-client fixture
// (newFixture, newController; feature gates as its tests set them, so AdditionalStorageConfig is
// off) and records the inputs and every MachineConfig it created: name, labels, ownerReferences
// and spec.config as the bytes it sent. Inputs come from OpenShift's documented examples
// (docs/ContainerRuntimeConfigDesign.md), its e2e and unit tests, and the openshift/api field
// docs; "source" in each file says which. OpenShift renders storage.conf's base from its
// template; these cases use the built-in default instead, so they also show that the default
// gives the same storage.conf as OpenShift's template. Nothing of OpenShift's code is in mco.
type golden struct {
	Description string `json:"description"`
	Source      string `json:"source"`
	Inputs      struct {
		Pools                   []mcfgv1.MachineConfigPool      `json:"pools"`
		ContainerRuntimeConfigs []mcfgv1.ContainerRuntimeConfig `json:"containerRuntimeConfigs"`
		Reconcile               string                          `json:"reconcile"`
	} `json:"inputs"`
	Outputs struct {
		Error          string            `json:"error"`
		MachineConfigs []mctest.GoldenMC `json:"machineConfigs"`
		Status         *struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"containerRuntimeConfig"`
	} `json:"outputs"`
}

// generateAll runs the core the way the controller does for one ContainerRuntimeConfig.
func generateAll(g golden) ([]*mcfgv1.MachineConfig, map[string]string, error) {
	var target *mcfgv1.ContainerRuntimeConfig
	for i := range g.Inputs.ContainerRuntimeConfigs {
		if g.Inputs.ContainerRuntimeConfigs[i].Name == g.Inputs.Reconcile {
			target = &g.Inputs.ContainerRuntimeConfigs[i]
		}
	}
	if err := Validate(target); err != nil {
		return nil, nil, err
	}
	pools, err := PoolsFor(target, g.Inputs.Pools)
	if err != nil {
		return nil, nil, err
	}
	if len(pools) == 0 {
		return nil, nil, &Error{Object: target.Name, Problems: []FieldError{{Field: "spec.machineConfigPoolSelector", Reason: "matches no MachineConfigPool"}}}
	}
	var mcs []*mcfgv1.MachineConfig
	recorded := map[string]string{}
	for _, pool := range pools {
		name, err := ManagedName(pool, target, g.Inputs.ContainerRuntimeConfigs, func(string) bool { return false })
		if err != nil {
			return nil, nil, err
		}
		if _, ok := target.Annotations[protocol.NameSuffixAnnotation]; !ok {
			recorded[protocol.NameSuffixAnnotation] = SuffixToRecord(pool.Name, name)
		}
		base, err := FindStorageBase(pool, nil)
		if err != nil {
			return nil, nil, err
		}
		mc, err := Generate(Input{Pool: pool, Config: target, Name: name, StorageBase: base, ControllerVersion: "test"})
		if err != nil {
			return nil, nil, err
		}
		mcs = append(mcs, mc)
	}
	return mcs, recorded, nil
}

func TestGeneratedMachineConfigsAreOpenShifts(t *testing.T) {
	for name, g := range mctest.LoadGoldens[golden](t) {
		t.Run(name, func(t *testing.T) {
			mcs, recorded, err := generateAll(g)
			if g.Outputs.Error != "" {
				if err == nil {
					t.Fatalf("OpenShift refused this (%s); mco generated %d MachineConfigs", g.Outputs.Error, len(mcs))
				}
				return
			}
			if err != nil {
				t.Fatalf("OpenShift generated its MachineConfigs; mco: %v", err)
			}
			mctest.CompareToOpenShift(t, mcs, g.Outputs.MachineConfigs)
			if g.Outputs.Status != nil {
				for k, v := range recorded {
					if w, ok := g.Outputs.Status.Annotations[k]; !ok || w != v {
						t.Errorf("would record %s=%q, OpenShift recorded %q (present %v)", k, v, w, ok)
					}
				}
			}
		})
	}
}

// The goldens' storage.conf came from OpenShift's template, whose keys the default repeats.
func TestDefaultStorageBaseIsDefault(t *testing.T) {
	base, err := FindStorageBase(&mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker"}, Spec: mcfgv1.MachineConfigPoolSpec{MachineConfigSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"machineconfiguration.openshift.io/role": "worker"}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if base.Source != DefaultStorageSource || string(base.Data) != string(DefaultStorageConf()) {
		t.Fatalf("base %q from %s", base.Data, base.Source)
	}
}
