package render

import (
	"encoding/json"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/ignition"
)

// rawMC builds a MachineConfig from a raw Ignition JSON string.
func rawMC(name, role, config string) *mcfgv1.MachineConfig {
	mc := &mcfgv1.MachineConfig{Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(config)}}}
	mc.Name = name
	if role != "" {
		mc.Labels = map[string]string{"machineconfiguration.openshift.io/role": role}
	}
	return mc
}

func workerPool(t testing.TB) *mcfgv1.MachineConfigPool {
	t.Helper()
	pool, err := pools.Builtin("worker")
	if err != nil {
		t.Fatal(err)
	}
	return pool
}

func mustRender(t *testing.T, pool *mcfgv1.MachineConfigPool, mcs []*mcfgv1.MachineConfig, opts Options) *Result {
	t.Helper()
	res, err := Render(pool, mcs, opts)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return res
}

func fileByPath(t *testing.T, cfg ignition.Config, path string) ignitionFile {
	t.Helper()
	for _, f := range cfg.Storage.Files {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("no file %s in %s", path, jsonOf(cfg))
	return ignitionFile{}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

const ign35 = `{"ignition":{"version":"3.5.0"}`
