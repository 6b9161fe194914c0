// Package pools embeds the built-in MachineConfigPool manifests so the binary can create them
// and render against them without a cluster.
package pools

import (
	"embed"
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/yaml"
)

//go:embed master.yaml worker.yaml
var manifests embed.FS

// Names are the built-in pools, in the order they are created.
var Names = []string{"master", "worker"}

// Builtin returns a fresh copy of the named built-in pool.
func Builtin(name string) (*mcfgv1.MachineConfigPool, error) {
	data, err := manifests.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no built-in pool %q (built-in: master, worker)", name)
	}
	var pool mcfgv1.MachineConfigPool
	if err := yaml.UnmarshalStrict(data, &pool); err != nil {
		return nil, fmt.Errorf("built-in pool %s: %w", name, err)
	}
	return &pool, nil
}
