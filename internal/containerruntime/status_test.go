package containerruntime

import (
	"errors"
	"fmt"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	later := metav1.NewTime(now.Add(time.Hour))
	st, changed := Status(mcfgv1.ContainerRuntimeConfigStatus{}, 1, nil, now)
	if !changed || st.ObservedGeneration != 1 || len(st.Conditions) != 1 || st.Conditions[0].Type != mcfgv1.ContainerRuntimeConfigSuccess || st.Conditions[0].Message != "Success" {
		t.Fatalf("first success: %+v", st)
	}
	if _, changed := Status(st, 1, nil, later); changed {
		t.Error("the same outcome for the same generation rewrites the status")
	}
	// A new generation with the same message replaces the last condition (OpenShift's rule).
	st2, changed := Status(st, 2, nil, later)
	if !changed || len(st2.Conditions) != 1 || st2.ObservedGeneration != 2 || !st2.Conditions[0].LastTransitionTime.Equal(&later) {
		t.Fatalf("same message, new generation: %+v", st2)
	}
	st3, _ := Status(st2, 3, errors.New("bad"), later)
	if len(st3.Conditions) != 2 || st3.Conditions[1].Type != mcfgv1.ContainerRuntimeConfigFailure || st3.Conditions[1].Message != "Error: bad" {
		t.Fatalf("failure appended: %+v", st3)
	}
	// Flapping between messages is bounded.
	for i := 0; i < 3*MaxConditions; i++ {
		st3, _ = Status(st3, int64(4+i), fmt.Errorf("problem %d", i), later)
	}
	if len(st3.Conditions) != MaxConditions || st3.Conditions[MaxConditions-1].Message != fmt.Sprintf("Error: problem %d", 3*MaxConditions-1) {
		t.Fatalf("conditions not bounded to the newest %d: %d, last %q", MaxConditions, len(st3.Conditions), st3.Conditions[len(st3.Conditions)-1].Message)
	}
}
