package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/testenv"
)

func TestMachineConfigAndPoolRoundTrip(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := env.Client

	mc := &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "99-worker-chrony",
			Labels: map[string]string{"machineconfiguration.openshift.io/role": "worker"},
		},
		Spec: mcfgv1.MachineConfigSpec{
			Config:          runtime.RawExtension{Raw: []byte(`{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"/etc/chrony.conf","contents":{"source":"data:,pool%20ntp.example.com"},"mode":420}]}}`)},
			KernelArguments: []string{"nosmt"},
		},
	}
	if err := c.Create(ctx, mc); err != nil {
		t.Fatalf("creating MachineConfig: %v", err)
	}
	var gotMC mcfgv1.MachineConfig
	if err := c.Get(ctx, types.NamespacedName{Name: mc.Name}, &gotMC); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gotMC.Spec.Config.Raw), "/etc/chrony.conf") || len(gotMC.Spec.KernelArguments) != 1 {
		t.Fatalf("MachineConfig did not round-trip: %s %v", gotMC.Spec.Config.Raw, gotMC.Spec.KernelArguments)
	}

	pool := loadPool(t, "worker.yaml")
	if err := c.Create(ctx, pool); err != nil {
		t.Fatalf("creating the shipped worker pool: %v", err)
	}
	pool.Status = mcfgv1.MachineConfigPoolStatus{
		Configuration: mcfgv1.MachineConfigPoolStatusConfiguration{
			ObjectReference: corev1.ObjectReference{Name: "rendered-worker-0123abcd"},
		},
		MachineCount:            3,
		ReadyMachineCount:       2,
		UpdatedMachineCount:     1,
		DegradedMachineCount:    1,
		UnavailableMachineCount: 1,
		Conditions: []mcfgv1.MachineConfigPoolCondition{
			{Type: mcfgv1.MachineConfigPoolUpdated, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()},
			{Type: mcfgv1.MachineConfigPoolUpdating, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()},
			{Type: mcfgv1.MachineConfigPoolDegraded, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()},
		},
	}
	if err := c.Status().Update(ctx, pool); err != nil {
		t.Fatalf("updating pool status subresource: %v", err)
	}

	out, err := env.Kubectl(ctx, "get", "mcp", "worker")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl get mcp worker:\n%s", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want header and one row, got:\n%s", out)
	}
	header, row := strings.Fields(lines[0]), strings.Fields(lines[1])
	wantHeader := []string{"NAME", "CONFIG", "UPDATED", "UPDATING", "DEGRADED", "MACHINECOUNT", "READYMACHINECOUNT", "UPDATEDMACHINECOUNT", "DEGRADEDMACHINECOUNT", "AGE"}
	if strings.Join(header, " ") != strings.Join(wantHeader, " ") {
		t.Fatalf("kubectl get mcp columns = %v, want %v", header, wantHeader)
	}
	wantRow := []string{"worker", "rendered-worker-0123abcd", "False", "True", "True", "3", "2", "1", "1"}
	if strings.Join(row[:len(wantRow)], " ") != strings.Join(wantRow, " ") {
		t.Fatalf("kubectl get mcp row = %v, want prefix %v", row, wantRow)
	}

	out, err = env.Kubectl(ctx, "get", "mc", mc.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "IGNITIONVERSION") || !strings.Contains(out, "3.5.0") {
		t.Fatalf("kubectl get mc lacks the IgnitionVersion column:\n%s", out)
	}
}

func TestShippedPoolsMatchOpenShift(t *testing.T) {
	for _, tc := range []struct {
		file, role, nodeRole string
		requiredForUpgrade   bool
	}{
		{"master.yaml", "master", "node-role.kubernetes.io/master", true},
		{"worker.yaml", "worker", "node-role.kubernetes.io/worker", false},
	} {
		pool := loadPool(t, tc.file)
		if pool.Name != tc.role {
			t.Errorf("%s: name %q", tc.file, pool.Name)
		}
		if got := pool.Spec.MachineConfigSelector.MatchLabels["machineconfiguration.openshift.io/role"]; got != tc.role {
			t.Errorf("%s: machineConfigSelector role = %q", tc.file, got)
		}
		if got, ok := pool.Spec.NodeSelector.MatchLabels[tc.nodeRole]; !ok || got != "" {
			t.Errorf("%s: nodeSelector lacks %s", tc.file, tc.nodeRole)
		}
		for _, l := range []string{"machineconfiguration.openshift.io/mco-built-in", "pools.operator.machineconfiguration.openshift.io/" + tc.role} {
			if _, ok := pool.Labels[l]; !ok {
				t.Errorf("%s: missing label %s", tc.file, l)
			}
		}
		if _, ok := pool.Labels["operator.machineconfiguration.openshift.io/required-for-upgrade"]; ok != tc.requiredForUpgrade {
			t.Errorf("%s: required-for-upgrade label present=%v, want %v", tc.file, ok, tc.requiredForUpgrade)
		}
	}
}

func loadPool(t *testing.T, file string) *mcfgv1.MachineConfigPool {
	t.Helper()
	pool, err := pools.Builtin(strings.TrimSuffix(file, ".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return pool
}
