package containerruntime

import (
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/generatedmc"
)

// Kind is the owner kind on generated MachineConfigs.
var Kind = mcfgv1.GroupVersion.WithKind("ContainerRuntimeConfig")

// Input is everything one generated MachineConfig depends on.
type Input struct {
	Pool   *mcfgv1.MachineConfigPool
	Config *mcfgv1.ContainerRuntimeConfig
	// Name comes from ManagedName.
	Name string
	// StorageBase is the pool's storage.conf (FindStorageBase); read only for an overlaySize.
	StorageBase       generatedmc.Base
	ControllerVersion string
}

func defaultBase() generatedmc.Base {
	return generatedmc.Base{Source: DefaultStorageSource, Data: DefaultStorageConf()}
}

// FindStorageBase returns the storage.conf an overlaySize is merged into for pool.
func FindStorageBase(pool *mcfgv1.MachineConfigPool, all []*mcfgv1.MachineConfig) (generatedmc.Base, error) {
	return generatedmc.FindBase(pool, all, StorageConfPath, defaultStorageConf, DefaultStorageSource)
}

// Files returns what c writes, in OpenShift's order: storage.conf, then the CRI-O drop-ins.
func Files(c *mcfgv1.ContainerRuntimeConfiguration, storageBase generatedmc.Base) ([]generatedmc.File, error) {
	if c == nil {
		return nil, nil
	}
	var files []generatedmc.File
	if needsStorageConf(c) {
		data, err := storageConf(storageBase.Data, c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", storageBase.Source, err)
		}
		files = append(files, generatedmc.File{Path: StorageConfPath, Data: data})
	}
	dropIns, err := crioDropIns(c)
	if err != nil {
		return nil, err
	}
	return append(files, dropIns...), nil
}

// Generate returns the MachineConfig for in, owned (as controller) by the
// ContainerRuntimeConfig; its spec.config is byte for byte what OpenShift writes.
func Generate(in Input) (*mcfgv1.MachineConfig, error) {
	if err := Validate(in.Config); err != nil {
		return nil, err
	}
	files, err := Files(in.Config.Spec.ContainerRuntimeConfig, in.StorageBase)
	if err != nil {
		return nil, fmt.Errorf("ContainerRuntimeConfig %s: pool %s: %w", in.Config.Name, in.Pool.Name, err)
	}
	raw, err := generatedmc.Ignition(files)
	if err != nil {
		return nil, fmt.Errorf("ContainerRuntimeConfig %s: encoding the Ignition config: %w", in.Config.Name, err)
	}
	owner := *metav1.NewControllerRef(in.Config, Kind)
	return generatedmc.MachineConfig(in.Pool.Name, in.Name, raw, []metav1.OwnerReference{owner}, in.ControllerVersion), nil
}
