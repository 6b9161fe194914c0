//go:build !nodeagent && !mcoserver

package main

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/spf13/cobra"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/problems"
)

func newValidateCommand() *cobra.Command {
	var pool string
	cmd := &cobra.Command{
		Use:   "validate [--pool NAME] PATH...",
		Short: "Check MachineConfig and MachineConfigPool manifests on disk, offline",
		Long: `Validate reads manifests the way "mco render" does (see "mco render --help" for the input
rules, Butane included) and runs the checks the controller would:
  - every document decodes strictly into a MachineConfig or MachineConfigPool;
  - every MachineConfig passes validation on its own (Ignition parses and validates, file
    modes, kernelType, extensions, inline data: sources only);
  - every pool has a usable machineConfigSelector and nodeSelector;
  - every pool is rendered, to catch problems that only show when configs merge. The pools
    are those in PATH plus --pool; with neither, the built-in master and worker pools. A pool
    that selects no MachineConfig in PATH is not rendered: on a cluster it gets others.

fcos Butane configs get role --pool; without --pool they are checked on their own only.

Prints nothing and exits 0 when all is well; otherwise lists every problem on stderr as
"file:document: field: reason" and exits 1.

What Ignition itself only warns about is not a problem: a key no field of the config's spec
takes (a spec 2 "networkd" section or a file's "filesystem" in a spec 3 config, a typo) is
ignored, and a key differing from a field only in case is read as that field, as Ignition and
OpenShift do. Each is printed on stderr as
"warning: file:document: MachineConfig NAME: field (line L col C): reason" and leaves the exit
code alone. A key given twice in one object (or as two case variants of one field) is an error.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, paths []string) error {
			return runValidate(cmd, pool, paths)
		},
	}
	cmd.Flags().StringVar(&pool, "pool", "", "also render this pool (a manifest in PATH or built-in master/worker); role for fcos Butane configs")
	return cmd
}

func runValidate(cmd *cobra.Command, poolName string, paths []string) error {
	var found problems.List
	set, err := manifest.Load(manifest.Options{FCOSRole: poolName}, paths...)
	found.AddLoad(err)
	extra, err := poolsToAdd(set, poolName)
	found.Add(err)
	found.Check(cmd.ErrOrStderr(), set, extra)
	return found.Report(cmd.ErrOrStderr(), "validation failed")
}

// poolsToAdd are the pools rendered besides those in the manifests: --pool when PATH does not
// define it, or, when there is neither, the built-in ones.
func poolsToAdd(set *manifest.Set, name string) ([]*mcfgv1.MachineConfigPool, error) {
	switch {
	case name != "":
		if set.Pool(name) != nil {
			return nil, nil
		}
		p, err := poolFor(set, name)
		if err != nil {
			return nil, err
		}
		return []*mcfgv1.MachineConfigPool{p}, nil
	case len(set.Pools) > 0:
		return nil, nil
	}
	var out []*mcfgv1.MachineConfigPool
	for _, n := range pools.Names {
		p, err := pools.Builtin(n)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
