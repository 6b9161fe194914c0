package render

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/ignition"
)

// largePool is the benchmark's workload: configs MachineConfigs holding files files in total,
// each MC also carrying a unit, so merge has keyed lists of every size to walk.
func largePool(b testing.TB, configs, files int) (*mcfgv1.MachineConfigPool, []*mcfgv1.MachineConfig) {
	pool, err := pools.Builtin("worker")
	if err != nil {
		b.Fatal(err)
	}
	perMC := files / configs
	mcs := make([]*mcfgv1.MachineConfig, configs)
	for i := range mcs {
		cfg := ignition.Empty()
		for j := 0; j < perMC; j++ {
			cfg.Storage.Files = append(cfg.Storage.Files, fileOf(fmt.Sprintf("/etc/bench/%03d/file-%03d.conf", i, j), fmt.Sprintf("key=%d-%d\n", i, j), 0o644))
		}
		cfg.Systemd.Units = append(cfg.Systemd.Units, unitOf(fmt.Sprintf("bench-%03d.service", i), "[Service]\nExecStart=/bin/true\n"))
		mcs[i] = mcOf(b, fmt.Sprintf("%02d-worker-bench-%03d", i%100, i), "worker", cfg)
	}
	return pool, mcs
}

func BenchmarkRender(b *testing.B) {
	pool, mcs := largePool(b, 200, 5000)
	b.ReportAllocs()
	for b.Loop() {
		res, err := Render(pool, mcs, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(res.Ignition.Storage.Files); n != 5000 {
			b.Fatalf("merged %d files, want 5000", n)
		}
	}
}

func mcOf(t testing.TB, name, role string, cfg ignition.Config) *mcfgv1.MachineConfig {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mc := &mcfgv1.MachineConfig{Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: raw}}}
	mc.Name = name
	if role != "" {
		mc.Labels = map[string]string{"machineconfiguration.openshift.io/role": role}
	}
	return mc
}

func fileOf(path, data string, mode int) ignitionFile {
	f := ignitionFile{}
	f.Path = path
	f.Mode = ptr.To(mode)
	f.Contents.Source = ptr.To("data:," + url.PathEscape(data))
	return f
}

func unitOf(name, contents string) ignitionUnit {
	return ignitionUnit{Name: name, Contents: ptr.To(contents), Enabled: ptr.To(true)}
}

// BenchmarkRenderOneChanged is the controller's steady state: one MachineConfig of the pool
// changed since the last render, the others are served from the parse cache.
func BenchmarkRenderOneChanged(b *testing.B) {
	pool, mcs := largePool(b, 200, 5000)
	cache := NewParseCache(10_000)
	if _, err := Render(pool, mcs, Options{Parse: cache.ParseWithWarnings}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		cfg := ignition.Empty()
		cfg.Storage.Files = []ignitionFile{fileOf("/etc/bench/changing.conf", fmt.Sprintf("generation=%d\n", i), 0o644)}
		mcs[0] = mcOf(b, mcs[0].Name, "worker", cfg)
		if _, err := Render(pool, mcs, Options{Parse: cache.ParseWithWarnings}); err != nil {
			b.Fatal(err)
		}
	}
}
