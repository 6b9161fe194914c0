package containerruntime

import (
	"errors"
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/protocol"
)

// names: 99-<pool>-generated-containerruntime, then -1 to -9.
const names = generatedmc.ContainerRuntimeNames

// kind is how ContainerRuntimeConfigs pick their pools and names.
var kind = generatedmc.Kind[mcfgv1.ContainerRuntimeConfig, *mcfgv1.ContainerRuntimeConfig]{
	Names: names,
	PoolSelector: func(cfg *mcfgv1.ContainerRuntimeConfig) *metav1.LabelSelector {
		return cfg.Spec.MachineConfigPoolSelector
	},
}

// GeneratedName is the MachineConfig name for pool and suffix ("" for none).
func GeneratedName(pool, suffix string) string { return names.Of(pool, suffix) }

// PoolsFor returns the pools cfg's machineConfigPoolSelector matches, in the given order. A nil
// or empty selector matches none (never every pool).
func PoolsFor(cfg *mcfgv1.ContainerRuntimeConfig, pools []mcfgv1.MachineConfigPool) ([]*mcfgv1.MachineConfigPool, error) {
	out, _, err := kind.PoolsFor(cfg, pools)
	if err != nil {
		return nil, &Error{Object: cfg.Name, Problems: []FieldError{{Field: "spec.machineConfigPoolSelector", Reason: err.Error()}}}
	}
	return out, nil
}

// ManagedName returns the MachineConfig cfg owns on pool, as OpenShift chooses it (see
// generatedmc.Names.Pick). all is every ContainerRuntimeConfig, with or without cfg; mcExists
// tells whether a MachineConfig exists.
func ManagedName(pool *mcfgv1.MachineConfigPool, cfg *mcfgv1.ContainerRuntimeConfig, all []mcfgv1.ContainerRuntimeConfig, mcExists func(string) bool) (string, error) {
	name, err := kind.ManagedName(pool, cfg, all, mcExists)
	var bad *generatedmc.BadSuffixError
	switch {
	case errors.As(err, &bad):
		return "", &Error{Object: bad.Object, Problems: []FieldError{{Field: "metadata.annotations[" + protocol.NameSuffixAnnotation + "]",
			Reason: fmt.Sprintf("%q is not a number from 1 to %d (or empty)", bad.Suffix, generatedmc.MaxNameSuffix)}}}
	case errors.Is(err, generatedmc.ErrNoNameLeft):
		return "", &Error{Object: cfg.Name, Problems: []FieldError{{Field: "spec.machineConfigPoolSelector",
			Reason: fmt.Sprintf("pool %s already has the most ContainerRuntimeConfigs it can take (10); delete an old one first", pool.Name)}}}
	}
	return name, err
}

// SuffixToRecord returns the annotation value to record for name on a config that has none.
func SuffixToRecord(pool, name string) string {
	suffix, _ := names.SuffixOf(pool, name)
	return suffix
}
