package daemon

import (
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
)

func TestObservedGeneration(t *testing.T) {
	status := func(desired string, observed int64) mcfgv1.MachineConfigNodeStatus {
		st := mcfgv1.MachineConfigNodeStatus{ObservedGeneration: observed}
		if desired != "" {
			st.ConfigVersion = &mcfgv1.MachineConfigNodeStatusMachineConfigVersion{Current: "a", Desired: desired}
		}
		return st
	}
	for _, tc := range []struct {
		name string
		spec observedSpec
		st   mcfgv1.MachineConfigNodeStatus
		want int64
	}{
		{"the status reports on the spec's config: its generation", observedSpec{3, "b"}, status("b", 2), 3},
		{"the spec asks for a config the status does not report on yet: kept", observedSpec{4, "c"}, status("b", 3), 3},
		{"no spec read yet: kept", observedSpec{}, status("b", 0), 0},
		{"no config version yet: kept", observedSpec{2, "b"}, status("", 1), 1},
		{"never lower than stored (OpenShift's agent wrote generation+1)", observedSpec{3, "b"}, status("b", 4), 4},
	} {
		if got := tc.spec.observed(tc.st); got != tc.want {
			t.Errorf("%s: observed = %d, want %d", tc.name, got, tc.want)
		}
	}
}
