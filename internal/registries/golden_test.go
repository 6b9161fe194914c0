package registries

import (
	"strings"
	"testing"

	apicfgv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	apioperatorsv1alpha1 "github.com/openshift/api/operator/v1alpha1"

	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/generatedmc/mctest"
)

// The goldens in testdata/openshift were made by running OpenShift's own controller, not by
// this package: openshift/machine-config-operator at commit 7ff337a4ffac8e7562692181178ede61e4b2eec5,
// checked out outside this repository and built with its vendor/ directory (tag
// containers_image_openpgp), with a throwaway _test.go in pkg/controller/container-runtime-config
// that drives Controller.syncImageConfig through the package's fake-client fixture (an
// image.config `cluster`, a ClusterVersion whose status.desired.image is the case's release
// image, the built-in master and worker pools) and records the inputs, the bases it merged into
// (generateOriginalContainerRuntimeConfigs: its templates' registries.conf and policy.json,
// here normalised to compact JSON) and every MachineConfig it created: name, labels,
// ownerReferences and spec.config as the bytes it sent. Inputs come from OpenShift's documented
// examples (docs/ImageMirrorSetDesign.md), its e2e and unit tests and the openshift/api field
// docs; "source" in each file says which. Nothing of OpenShift's code is in mco.
type golden struct {
	Description string `json:"description"`
	Source      string `json:"source"`
	Inputs      struct {
		Pools                      []mcfgv1.MachineConfigPool                       `json:"pools"`
		Image                      *apicfgv1.Image                                  `json:"image"`
		ReleaseImage               string                                           `json:"releaseImage"`
		ImageDigestMirrorSets      []*apicfgv1.ImageDigestMirrorSet                 `json:"imageDigestMirrorSets"`
		ImageTagMirrorSets         []*apicfgv1.ImageTagMirrorSet                    `json:"imageTagMirrorSets"`
		ImageContentSourcePolicies []*apioperatorsv1alpha1.ImageContentSourcePolicy `json:"imageContentSourcePolicies"`
		Bases                      map[string]map[string]string                     `json:"bases"`
	} `json:"inputs"`
	Outputs struct {
		Error          string            `json:"error"`
		MachineConfigs []mctest.GoldenMC `json:"machineConfigs"`
	} `json:"outputs"`
}

func (g golden) cluster(releaseImage string) Cluster {
	return Cluster{Image: g.Inputs.Image, ReleaseImage: releaseImage, IDMS: g.Inputs.ImageDigestMirrorSets, ITMS: g.Inputs.ImageTagMirrorSets, ICSP: g.Inputs.ImageContentSourcePolicies}
}

// generate runs the core as the controller does, with OpenShift's template bases standing in
// for the MachineConfigs that carry them on OpenShift (01-<role>-container-runtime).
func (g golden) generate(releaseImage string) ([]*mcfgv1.MachineConfig, error) {
	plan, err := NewPlan(g.cluster(releaseImage))
	if err != nil {
		return nil, err
	}
	var out []*mcfgv1.MachineConfig
	for _, pool := range Pools(g.Inputs.Pools) {
		b := g.Inputs.Bases[pool.Name]
		bases := Bases{
			Registries: generatedmc.Base{Source: "OpenShift's template", Data: []byte(b[RegistriesConfPath])},
			Policy:     generatedmc.Base{Source: "OpenShift's template", Data: []byte(b[PolicyJSONPath])},
		}
		mc, err := plan.Generate(pool, bases, "test")
		if err != nil {
			return nil, err
		}
		out = append(out, mc)
	}
	return out, nil
}

func TestGeneratedMachineConfigsAreOpenShifts(t *testing.T) {
	for name, g := range mctest.LoadGoldens[golden](t) {
		t.Run(name, func(t *testing.T) {
			got, err := g.generate(g.Inputs.ReleaseImage)
			if g.Outputs.Error != "" {
				if err == nil {
					t.Fatalf("OpenShift refused this (%s); mco generated %d MachineConfigs", g.Outputs.Error, len(got))
				}
				t.Logf("refused: %v (OpenShift: %s)", err, g.Outputs.Error)
				return
			}
			if err != nil {
				t.Fatalf("OpenShift generated its MachineConfigs; mco: %v", err)
			}
			mctest.CompareToOpenShift(t, got, g.Outputs.MachineConfigs)
		})
	}
}

// Without a ClusterVersion (vanilla Kubernetes) there is no release payload to protect: every
// case that does not block the payload's registry comes out the same.
func TestWithoutReleaseImageTheSameUnlessThePayloadIsBlocked(t *testing.T) {
	for name, g := range mctest.LoadGoldens[golden](t) {
		if strings.Contains(name, "payload") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			got, err := g.generate("")
			if (err != nil) != (g.Outputs.Error != "") {
				t.Fatalf("error %v, OpenShift's %q", err, g.Outputs.Error)
			}
			if err == nil {
				mctest.CompareToOpenShift(t, got, g.Outputs.MachineConfigs)
			}
		})
	}
}
