package render

import (
	"slices"

	operatorv1 "github.com/openshift/api/operator/v1"
)

// Overrides are the storage sections whose day-2 changes MachineConfiguration cluster's
// spec.irreconcilableValidationOverrides allows (OpenShift 4.19+). Such a change is accepted
// and left alone on running nodes (the agent never partitions or formats a disk); machines
// provisioned later get it from the served config. The zero value allows nothing.
type Overrides struct {
	Disks, Filesystems, Raid bool
}

// OverridesOf reads spec.irreconcilableValidationOverrides. OpenShift honours it only behind
// its IrreconcilableMachineConfig feature gate; mco has no gates and always does.
func OverridesOf(spec operatorv1.IrreconcilableValidationOverrides) Overrides {
	return Overrides{
		Disks:       slices.Contains(spec.Storage, operatorv1.IrreconcilableValidationOverridesStorageDisks),
		Filesystems: slices.Contains(spec.Storage, operatorv1.IrreconcilableValidationOverridesStorageFileSystems),
		Raid:        slices.Contains(spec.Storage, operatorv1.IrreconcilableValidationOverridesStorageRaid),
	}
}
