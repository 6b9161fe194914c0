package kubeletconfig

import (
	"errors"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/protocol"
)

// names: 99-<pool>-generated-kubelet, then -1 to -9.
const names = generatedmc.KubeletNames

// kind is how KubeletConfigs pick their pools and names.
var kind = generatedmc.Kind[mcfgv1.KubeletConfig, *mcfgv1.KubeletConfig]{
	Names:        names,
	PoolSelector: func(kc *mcfgv1.KubeletConfig) *metav1.LabelSelector { return kc.Spec.MachineConfigPoolSelector },
}

// GeneratedName is the MachineConfig name for suffix ("" or a number) on pool.
func GeneratedName(pool, suffix string) string { return names.Of(pool, suffix) }

// ManagedName picks the generated MachineConfig name of kc on pool as OpenShift does (see
// generatedmc.Names.Pick). all is every KubeletConfig, with or without kc (a cache may not have
// it yet); mcExists says whether a MachineConfig of that name exists.
func ManagedName(pool *mcfgv1.MachineConfigPool, kc *mcfgv1.KubeletConfig, all []mcfgv1.KubeletConfig, mcExists func(string) bool) (string, error) {
	name, err := kind.ManagedName(pool, kc, all, mcExists)
	var bad *generatedmc.BadSuffixError
	switch {
	case errors.As(err, &bad):
		return "", fieldError(bad.Object, "metadata.annotations["+protocol.NameSuffixAnnotation+"]", "%q is not a name suffix (empty or 1 to %d)", bad.Suffix, generatedmc.MaxNameSuffix)
	case errors.Is(err, generatedmc.ErrNoNameLeft):
		return "", fieldError(kc.Name, "spec.machineConfigPoolSelector",
			"pool %s already has the most KubeletConfigs it can (%d: %s to -%d); delete old ones before adding another",
			pool.Name, generatedmc.MaxNameSuffix+1, GeneratedName(pool.Name, ""), generatedmc.MaxNameSuffix)
	}
	return name, err
}

// PoolsFor returns the pools kc applies to. None is an error: a KubeletConfig that changes
// nothing is a mistake the admin should see in its status.
func PoolsFor(kc *mcfgv1.KubeletConfig, pools []mcfgv1.MachineConfigPool) ([]*mcfgv1.MachineConfigPool, error) {
	out, empty, err := kind.PoolsFor(kc, pools)
	if err != nil {
		return nil, fieldError(kc.Name, "spec.machineConfigPoolSelector", "%v", err)
	}
	if len(out) == 0 {
		reason := "matches no MachineConfigPool"
		if empty {
			reason = "is empty, so it selects no MachineConfigPool"
		}
		return nil, fieldError(kc.Name, "spec.machineConfigPoolSelector", "%s", reason)
	}
	return out, nil
}

// SuffixFor returns the protocol.NameSuffixAnnotation value that name (a generated name of pool) records.
func SuffixFor(pool, name string) string {
	suffix, _ := names.SuffixOf(pool, name)
	return suffix
}

// IsGeneratedName reports whether name is a generated name of some pool, as the finalizers a
// KubeletConfig carries are.
func IsGeneratedName(name string) bool { return names.IsName(name) }
