package registries

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"slices"

	"github.com/containers/image/v5/docker/reference"
	apicfgv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	apioperatorsv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/protocol"
)

// ImageConfigName is the one image.config.openshift.io object OpenShift reads.
const ImageConfigName = "cluster"

// Built-in bases for pools none of whose MachineConfigs writes the file (docs/generated-configs.md).
var (
	//go:embed default-registries.conf
	defaultRegistriesConf []byte
	//go:embed default-policy.json
	defaultPolicyJSON []byte
)

// Names of the built-in defaults in messages.
const (
	DefaultRegistriesSource = "the built-in default registries.conf"
	DefaultPolicySource     = "the built-in default policy.json"
)

// DefaultRegistriesConf returns a copy of the built-in base registries.conf.
func DefaultRegistriesConf() []byte { return bytes.Clone(defaultRegistriesConf) }

// DefaultPolicyJSON returns a copy of the built-in base policy.json.
func DefaultPolicyJSON() []byte { return bytes.Clone(defaultPolicyJSON) }

// GeneratedName is the MachineConfig name for pool.
func GeneratedName(pool string) string { return generatedmc.RegistriesNames.Of(pool, "") }

// Pools returns the pools that get a registries MachineConfig: the built-in ones, as on
// OpenShift. A custom pool inherits its parent's (worker's) through its machineConfigSelector.
func Pools(pools []mcfgv1.MachineConfigPool) []*mcfgv1.MachineConfigPool {
	var out []*mcfgv1.MachineConfigPool
	for i := range pools {
		if _, ok := pools[i].Labels[protocol.BuiltInPoolLabel]; ok {
			out = append(out, &pools[i])
		}
	}
	return out
}

// Cluster is the cluster-wide input, the same for every pool.
type Cluster struct {
	// Image is image.config.openshift.io/cluster; nil where it does not exist.
	Image *apicfgv1.Image
	// ReleaseImage is ClusterVersion version's status.desired.image; "" where there is none.
	ReleaseImage string
	IDMS         []*apicfgv1.ImageDigestMirrorSet
	ITMS         []*apicfgv1.ImageTagMirrorSet
	ICSP         []*apioperatorsv1alpha1.ImageContentSourcePolicy
}

// Configured reports whether there is anything to generate from. OpenShift always has the
// image config, so it always writes the MachineConfigs (an empty Ignition config when nothing
// is set); without one and without mirror sets there is nothing to write.
func (c Cluster) Configured() bool {
	return c.Image != nil || len(c.IDMS)+len(c.ITMS)+len(c.ICSP) > 0
}

// Plan is a validated Cluster: what every pool's registries MachineConfig is made of.
type Plan struct {
	cluster Cluster
	sources apicfgv1.RegistrySources
	blocked blockedLists
}

// Dropped are the blocked registries left out because they hold the release payload, which
// has no unblocked mirror (only with a ReleaseImage; OpenShift logs them and goes on).
func (p *Plan) Dropped() []string { return p.blocked.dropped }

// NewPlan validates c as OpenShift does and decides the blocked and allowed lists. An error
// names the object and field refused; then no pool's MachineConfig may change.
func NewPlan(c Cluster) (*Plan, error) {
	c.IDMS, c.ITMS, c.ICSP = sorted(c.IDMS), sorted(c.ITMS), sorted(c.ICSP)
	p := &Plan{cluster: c}
	if c.Image != nil {
		p.sources = c.Image.Spec.RegistrySources
	}
	if err := validateScopes(p.sources); err != nil {
		return nil, err
	}
	if err := validateMirrorSets(mirrorSets(c.IDMS, c.ICSP, c.ITMS)); err != nil {
		return nil, err
	}
	blocked, err := splitBlocked(c.ReleaseImage, p.sources, c.IDMS, c.ICSP)
	if err != nil {
		return nil, err
	}
	if len(blocked.allowed) > 0 && len(blocked.policy) > 0 && !onlyPayloadAllowed(c.ReleaseImage, blocked.allowed) {
		return nil, &Error{Object: imageObject, Field: "spec.registrySources",
			Reason: "allowedRegistries and blockedRegistries are both set; only one of them may be"}
	}
	p.blocked = blocked
	return p, nil
}

// onlyPayloadAllowed: the one case where both lists may be set is the payload repository that
// splitBlocked allowed itself, with no allowedRegistries given.
func onlyPayloadAllowed(releaseImage string, allowed []string) bool {
	if releaseImage == "" || len(allowed) != 1 {
		return false
	}
	ref, err := reference.ParseNamed(releaseImage)
	return err == nil && allowed[0] == ref.Name()
}

// Bases are one pool's base files.
type Bases struct {
	Registries, Policy generatedmc.Base
}

// FindBases returns pool's registries.conf and policy.json as its own MachineConfigs write them.
func FindBases(pool *mcfgv1.MachineConfigPool, all []*mcfgv1.MachineConfig) (Bases, error) {
	reg, err := generatedmc.FindBase(pool, all, RegistriesConfPath, defaultRegistriesConf, DefaultRegistriesSource)
	if err != nil {
		return Bases{}, err
	}
	pol, err := generatedmc.FindBase(pool, all, PolicyJSONPath, defaultPolicyJSON, DefaultPolicySource)
	if err != nil {
		return Bases{}, err
	}
	return Bases{Registries: reg, Policy: pol}, nil
}

// Files returns what the plan writes over bases, in OpenShift's order: registries.conf (when
// any insecure or blocked registry or mirror set is given; an empty but present insecure list
// counts, as there), policy.json (when any registry is blocked or allowed), the search
// registries drop-in (when the list is present).
func (p *Plan) Files(bases Bases) ([]generatedmc.File, error) {
	c, src := p.cluster, p.sources
	var reg, pol, search []byte
	var err error
	if src.InsecureRegistries != nil || p.blocked.registries != nil || len(c.ICSP)+len(c.IDMS)+len(c.ITMS) > 0 {
		if reg, err = registriesConf(bases.Registries.Data, src.InsecureRegistries, p.blocked.registries, c.ICSP, c.IDMS, c.ITMS); err != nil {
			return nil, fmt.Errorf("%s: %w", bases.Registries.Source, err)
		}
	}
	if p.blocked.policy != nil || p.blocked.allowed != nil {
		if pol, err = policyJSON(bases.Policy.Data, p.blocked.policy, p.blocked.allowed); err != nil {
			return nil, fmt.Errorf("%s: %w", bases.Policy.Source, err)
		}
	}
	if src.ContainerRuntimeSearchRegistries != nil {
		if search, err = searchRegistriesDropIn(src.ContainerRuntimeSearchRegistries); err != nil {
			return nil, err
		}
	}
	return []generatedmc.File{
		{Path: RegistriesConfPath, Data: reg},
		{Path: PolicyJSONPath, Data: pol},
		{Path: SearchRegistriesDropInPath, Data: search},
	}, nil
}

// Generate returns pool's registries MachineConfig: spec.config byte for byte as OpenShift
// writes it, owned by the image config when there is one (not as controller, as there).
func (p *Plan) Generate(pool *mcfgv1.MachineConfigPool, bases Bases, controllerVersion string) (*mcfgv1.MachineConfig, error) {
	files, err := p.Files(bases)
	if err != nil {
		return nil, fmt.Errorf("pool %s: %w", pool.Name, err)
	}
	raw, err := generatedmc.Ignition(files)
	if err != nil {
		return nil, fmt.Errorf("pool %s: encoding the Ignition config: %w", pool.Name, err)
	}
	var owners []metav1.OwnerReference
	if img := p.cluster.Image; img != nil {
		owners = []metav1.OwnerReference{{APIVersion: apicfgv1.GroupVersion.String(), Kind: "Image", Name: img.Name, UID: img.UID}}
	}
	return generatedmc.MachineConfig(pool.Name, GeneratedName(pool.Name), raw, owners, controllerVersion), nil
}

// sorted returns objects ordered by name, so messages and outputs never depend on list order.
func sorted[T interface{ GetName() string }](objs []T) []T {
	out := slices.Clone(objs)
	slices.SortFunc(out, func(a, b T) int { return cmp.Compare(a.GetName(), b.GetName()) })
	return out
}
