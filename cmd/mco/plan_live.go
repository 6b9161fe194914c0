//go:build !nodeagent && !mcoserver

package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/planview"
	"github.com/mco-dev/mco/internal/problems"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/scheme"
)

// runLivePlan plans -f against the cluster: it only reads, calls changeplan.Live and prints.
func runLivePlan(cmd *cobra.Command, f planFlags) error {
	if len(f.files) == 0 && f.pool == "" {
		return fmt.Errorf("-f is needed: the manifests about to be applied (or --pool alone: the pool as it stands, its nodes behind its target and those waiting for adoption)")
	}
	if f.current != "" || f.osImageURL != "" || f.extensionsImage != "" {
		return fmt.Errorf("--current, --os-image-url and --base-os-extensions-image are for --offline; against a cluster they come from the cluster")
	}
	var found problems.List
	role := f.pool
	if role == "" {
		role = protocol.WorkerPool
	}
	set := &manifest.Set{}
	if len(f.files) > 0 {
		var err error
		set, err = manifest.Load(manifest.Options{FCOSRole: role}, f.files...)
		found.AddLoad(err)
		if err := found.Report(cmd.ErrOrStderr(), "bad input"); err != nil {
			return &exitError{code: 2, err: err}
		}
	}
	c, _, err := scheme.NewClient(f.kubeconfig)
	if err != nil {
		return err
	}
	cluster, err := changeplan.ReadCluster(cmd.Context(), c)
	if err != nil {
		return err
	}
	if f.policy != "" {
		// A policy about to be applied with the change replaces the cluster's.
		if cluster.Policies, err = loadPolicies(f.policy); err != nil {
			return err
		}
	}
	report, err := changeplan.Live(cluster, appliedFrom(set), f.pool)
	if err != nil {
		return err
	}
	if err := writeOutput(cmd.OutOrStdout(), f.output, report, func(w io.Writer) error { return planview.WriteReport(w, report, set) }); err != nil {
		return err
	}
	if code := report.ExitCode(); code != 0 {
		return &exitError{code: code, err: errors.New(report.Why())}
	}
	return nil
}

// appliedFrom is the manifests with the JSON their files wrote, so a field a manifest leaves
// out is kept as kubectl apply keeps it.
func appliedFrom(set *manifest.Set) changeplan.Applied {
	out := changeplan.Applied{MachineConfigs: set.MachineConfigs, Pools: set.Pools, Manifests: changeplan.Manifests{}}
	for _, mc := range set.MachineConfigs {
		if src, ok := set.MachineConfigSource(mc.Name); ok {
			if js, ok := src.JSON(); ok {
				out.Manifests[changeplan.Key("MachineConfig", mc.Name)] = js
			}
		}
	}
	for _, p := range set.Pools {
		if src, ok := set.PoolSource(p.Name); ok {
			if js, ok := src.JSON(); ok {
				out.Manifests[changeplan.Key("MachineConfigPool", p.Name)] = js
			}
		}
	}
	return out
}
