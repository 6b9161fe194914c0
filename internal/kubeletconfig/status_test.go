package kubeletconfig

import (
	"errors"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

func TestStatus(t *testing.T) {
	bad := errors.New("KubeletConfig x: spec.kubeletConfig.cgroupDriver: is not allowed to be set, but contains: y")
	st := Status(mcfgv1.KubeletConfigStatus{}, 1, nil, at(1))
	want := []mcfgv1.KubeletConfigCondition{
		{Type: mcfgv1.KubeletConfigAccepted, Status: corev1.ConditionTrue, Message: "Success", LastTransitionTime: at(1)},
		{Type: mcfgv1.KubeletConfigSuccess, Status: corev1.ConditionTrue, Message: "Success", LastTransitionTime: at(1)},
	}
	if st.ObservedGeneration != 1 || !equality.Semantic.DeepEqual(st.Conditions, want) {
		t.Fatalf("first success: %+v", st)
	}
	if again := Status(st, 1, nil, at(2)); !equality.Semantic.DeepEqual(again, st) {
		t.Errorf("a repeated success changed the status: %+v", again)
	}
	st = Status(st, 2, bad, at(3))
	if n := len(st.Conditions); n != 3 || st.ObservedGeneration != 2 ||
		st.Conditions[1].Status != corev1.ConditionFalse || st.Conditions[1].Message != "Error: "+bad.Error() ||
		st.Conditions[2].Type != mcfgv1.KubeletConfigFailure || st.Conditions[2].Status != corev1.ConditionTrue {
		t.Fatalf("failure after success: %+v", st)
	}
	st = Status(st, 3, nil, at(4))
	st = Status(st, 4, bad, at(5))
	if n := len(st.Conditions); n != 4 || st.Conditions[0].LastTransitionTime != at(3) || st.Conditions[2].LastTransitionTime != at(5) {
		t.Errorf("history not cut to the last three Accepted plus the legacy one: %+v", st.Conditions)
	}
}
