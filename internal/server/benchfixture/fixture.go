// Package benchfixture builds the deterministic rendered config the server's benchmarks use:
// 50 files of 1–4 KB, 12 systemd units (one masked, one with only a drop-in) and one SSH key,
// about the size (≈194 KB served) of the config the original server manages 45 req/s with.
package benchfixture

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// RenderedName is the fixture's rendered config name.
const RenderedName = "rendered-worker-bench"

// Ignition is the fixture config (spec 3.5). Content is text shaped like real config files,
// so escaping costs are realistic.
func Ignition() types.Config {
	rng := rand.New(rand.NewPCG(4, 194))
	cfg := types.Config{Ignition: types.Ignition{Version: "3.5.0"}}
	for i := range 50 {
		size := 1024 + rng.IntN(2950)
		cfg.Storage.Files = append(cfg.Storage.Files, types.File{
			Node: types.Node{Path: fmt.Sprintf("/etc/bench/conf-%02d.conf", i), Overwrite: ptr.To(true)},
			FileEmbedded1: types.FileEmbedded1{
				Mode:     ptr.To(0o644),
				Contents: types.Resource{Source: ptr.To("data:," + escape(configText(rng, size)))},
			},
		})
	}
	for i := range 10 {
		cfg.Systemd.Units = append(cfg.Systemd.Units, types.Unit{
			Name:     fmt.Sprintf("bench-%02d.service", i),
			Enabled:  ptr.To(true),
			Contents: ptr.To(fmt.Sprintf("[Unit]\nDescription=bench unit %d\n\n[Service]\nType=oneshot\nExecStart=/usr/bin/true %d\nRemainAfterExit=yes\n\n[Install]\nWantedBy=multi-user.target\n", i, i)),
		})
	}
	cfg.Systemd.Units = append(cfg.Systemd.Units,
		types.Unit{Name: "bench-masked.service", Mask: ptr.To(true)},
		types.Unit{Name: "bench-dropin.service", Dropins: []types.Dropin{{
			Name: "10-bench.conf", Contents: ptr.To("[Service]\nEnvironment=BENCH=1\n"),
		}}},
	)
	cfg.Passwd.Users = []types.PasswdUser{{
		Name:              "core",
		SSHAuthorizedKeys: []types.SSHAuthorizedKey{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBenchBenchBenchBenchBenchBenchBenchBenchBen bench@mco"},
	}}
	return cfg
}

// MachineConfig is the fixture as a rendered MachineConfig.
func MachineConfig() *mcfgv1.MachineConfig {
	raw, err := json.Marshal(Ignition())
	if err != nil {
		panic(err)
	}
	return &mcfgv1.MachineConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: mcfgv1.GroupVersion.String(), Kind: "MachineConfig"},
		ObjectMeta: metav1.ObjectMeta{Name: RenderedName},
		Spec: mcfgv1.MachineConfigSpec{
			Config:          runtime.RawExtension{Raw: raw},
			OSImageURL:      "quay.io/example/os@sha256:0000000000000000000000000000000000000000000000000000000000000000",
			KernelArguments: []string{"audit=1"},
		},
	}
}

// Pool is a worker pool whose spec and status point at the fixture.
func Pool() *mcfgv1.MachineConfigPool {
	pool := &mcfgv1.MachineConfigPool{
		TypeMeta:   metav1.TypeMeta{APIVersion: mcfgv1.GroupVersion.String(), Kind: "MachineConfigPool"},
		ObjectMeta: metav1.ObjectMeta{Name: "worker"},
	}
	pool.Spec.Configuration.Name = RenderedName
	pool.Status.Configuration.Name = RenderedName
	return pool
}

var words = strings.Fields("server port timeout enabled path cache log level max_connections user group " +
	"listen address retries interval upstream backend frontend tls cert key ca bundle region zone")

func configText(rng *rand.Rand, size int) string {
	var b strings.Builder
	for b.Len() < size {
		fmt.Fprintf(&b, "%s_%s_%s=%s%d\n", words[rng.IntN(len(words))], words[rng.IntN(len(words))],
			words[rng.IntN(len(words))], words[rng.IntN(len(words))], rng.IntN(100000))
	}
	return b.String()[:size]
}

// escape percent-encodes like a data URL must, without importing the server's encoder.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
