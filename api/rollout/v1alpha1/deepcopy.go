package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Hand-written in the shape controller-gen produces; deepcopy_test.go checks no copy shares memory.

func (in *MachineConfigPoolRollout) DeepCopyInto(out *MachineConfigPoolRollout) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	in.Status.DeepCopyInto(&out.Status)
}

func (in *MachineConfigPoolRollout) DeepCopy() *MachineConfigPoolRollout {
	if in == nil {
		return nil
	}
	out := new(MachineConfigPoolRollout)
	in.DeepCopyInto(out)
	return out
}

func (in *MachineConfigPoolRollout) DeepCopyObject() runtime.Object { return in.DeepCopy() }

func (in *MachineConfigPoolRolloutList) DeepCopyInto(out *MachineConfigPoolRolloutList) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]MachineConfigPoolRollout, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

func (in *MachineConfigPoolRolloutList) DeepCopy() *MachineConfigPoolRolloutList {
	if in == nil {
		return nil
	}
	out := new(MachineConfigPoolRolloutList)
	in.DeepCopyInto(out)
	return out
}

func (in *MachineConfigPoolRolloutList) DeepCopyObject() runtime.Object { return in.DeepCopy() }

func (in *MachineConfigPoolRolloutSpec) DeepCopyInto(out *MachineConfigPoolRolloutSpec) {
	*out = *in
	if in.PoolSelector != nil {
		out.PoolSelector = in.PoolSelector.DeepCopy()
	}
	if in.Canary != nil {
		c := *in.Canary
		out.Canary = &c
	}
	in.HealthGate.DeepCopyInto(&out.HealthGate)
	if in.MaintenanceWindows != nil {
		out.MaintenanceWindows = make([]MaintenanceWindow, len(in.MaintenanceWindows))
		for i := range in.MaintenanceWindows {
			in.MaintenanceWindows[i].DeepCopyInto(&out.MaintenanceWindows[i])
		}
	}
}

func (in *HealthGate) DeepCopyInto(out *HealthGate) {
	*out = *in
	if in.NodeReady != nil {
		v := *in.NodeReady
		out.NodeReady = &v
	}
	if in.DaemonSetPodsReady != nil {
		v := *in.DaemonSetPodsReady
		out.DaemonSetPodsReady = &v
	}
}

func (in *MaintenanceWindow) DeepCopyInto(out *MaintenanceWindow) {
	*out = *in
	if in.Days != nil {
		out.Days = append([]Weekday(nil), in.Days...)
	}
	if in.Duration != nil {
		d := *in.Duration
		out.Duration = &d
	}
}

func (in *MachineConfigPoolRolloutStatus) DeepCopyInto(out *MachineConfigPoolRolloutStatus) {
	*out = *in
	if in.NextWindowStart != nil {
		out.NextWindowStart = in.NextWindowStart.DeepCopy()
	}
	if in.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(in.Conditions))
		for i := range in.Conditions {
			in.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}
