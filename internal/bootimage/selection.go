package bootimage

import (
	"fmt"

	operatorv1 "github.com/openshift/api/operator/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Enrollment says which MachineSets are opted in to boot image updates.
type Enrollment struct {
	Mode operatorv1.MachineManagerSelectorMode
	// Selector applies in Partial mode.
	Selector labels.Selector
}

// DefaultMachineManagers is the effective configuration when the admin wrote no machineManagers
// at all: every MachineSet, as OpenShift defaults on the platforms it supports. Running the
// controller (mco controller --boot-images) is the cluster-wide switch; an explicitly empty
// list, or mode None, opts out.
func DefaultMachineManagers() []operatorv1.MachineManager {
	return []operatorv1.MachineManager{{
		Resource:  operatorv1.MachineSets,
		APIGroup:  operatorv1.MachineAPI,
		Selection: operatorv1.MachineManagerSelector{Mode: operatorv1.All},
	}}
}

// EffectiveMachineManagers is spec.managedBootImages.machineManagers with the default applied:
// nil (absent) means the default, an empty non-nil list (explicit []) means nothing.
func EffectiveMachineManagers(spec operatorv1.ManagedBootImages) []operatorv1.MachineManager {
	if spec.MachineManagers == nil {
		return DefaultMachineManagers()
	}
	return spec.MachineManagers
}

// MachineSetEnrollment finds the machinesets/machine.openshift.io entry; without one, nothing
// is enrolled.
func MachineSetEnrollment(managers []operatorv1.MachineManager) (Enrollment, error) {
	for i, m := range managers {
		if m.Resource != operatorv1.MachineSets || m.APIGroup != operatorv1.MachineAPI {
			continue
		}
		field := fmt.Sprintf("spec.managedBootImages.machineManagers.%d.selection.partial.machineResourceSelector", i)
		switch m.Selection.Mode {
		case operatorv1.All:
			return Enrollment{Mode: operatorv1.All}, nil
		case operatorv1.Partial:
			if m.Selection.Partial == nil || m.Selection.Partial.MachineResourceSelector == nil {
				return Enrollment{}, fmt.Errorf("%s: missing: selection mode Partial needs it", field)
			}
			sel, err := metav1.LabelSelectorAsSelector(m.Selection.Partial.MachineResourceSelector)
			if err != nil {
				return Enrollment{}, fmt.Errorf("%s: %w", field, err)
			}
			return Enrollment{Mode: operatorv1.Partial, Selector: sel}, nil
		default:
			return Enrollment{Mode: operatorv1.None}, nil
		}
	}
	return Enrollment{Mode: operatorv1.None}, nil
}

// Enrolls reports whether a MachineSet with these labels is opted in.
func (e Enrollment) Enrolls(machineSetLabels map[string]string) bool {
	switch e.Mode {
	case operatorv1.All:
		return true
	case operatorv1.Partial:
		return e.Selector.Matches(labels.Set(machineSetLabels))
	}
	return false
}
