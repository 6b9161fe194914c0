//go:build !nodeagent

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mco-dev/mco/internal/devcluster"
	"github.com/mco-dev/mco/internal/machine"
)

// defaultToolsDir is bin/tools beside bin/mco, where `make tools` puts them.
func defaultToolsDir() string {
	exe, err := os.Executable()
	if err != nil {
		return "bin/tools"
	}
	return filepath.Join(filepath.Dir(exe), "tools")
}

func newDevCommand() *cobra.Command {
	dev := &cobra.Command{
		Use:   "dev",
		Short: "Run a whole mco cluster on this host (etcd, kube-apiserver, controller, server, real systemd machines)",
	}
	var dir, toolsDir string
	dev.PersistentFlags().StringVar(&dir, "dir", "_out/dev", "directory holding the cluster's state, logs, kubeconfig and node roots")
	dev.PersistentFlags().StringVar(&toolsDir, "tools-dir", defaultToolsDir(), "directory with etcd, kube-apiserver and ignition (built by `make tools`)")

	opts := devcluster.Options{}
	up := &cobra.Command{
		Use:   "up",
		Short: "Start a dev cluster and return once every node is Done; it keeps running in the background",
		Long: `Start etcd and kube-apiserver, install the CRDs, the master and worker pools (and any
--custom-pools, which inherit worker) and MachineConfiguration cluster, run mco controller and
mco server, then boot --nodes machines. Each is a real systemd Linux machine (systemd as PID 1
of its own namespaces, root an overlay of an OS image on its own disk, DIR/machines/<name>):
before its first boot the real Ignition client follows its pool's <pool>-user-data-managed
pointer config; then its own units run the first-boot service, containerd and a real kubelet that
joins with the served bootstrap kubeconfig, and mco daemon. Reboots are real: systemd stops everything and the
supervisor boots the machine again with the kernel arguments and OS image the machine staged.
Needs root (namespaces, loop mounts).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			opts.Dir, opts.ToolsDir, opts.MCO, opts.Log = dir, toolsDir, exe, cmd.OutOrStdout()
			if len(opts.NodePools) == 0 {
				opts.NodePools = []string{"worker"}
			}
			if err := devcluster.Up(cmd.Context(), opts); err != nil {
				return err
			}
			abs, _ := filepath.Abs(dir)
			fmt.Fprintf(cmd.OutOrStdout(), "\ndev cluster up in %s\n  export KUBECONFIG=%s/kubeconfig\n  %s/kubectl get mcp,nodes\n  mco dev down --dir %s\n", abs, abs, toolsDir, abs)
			return nil
		},
	}
	up.Flags().IntVar(&opts.Nodes, "nodes", 3, "number of machines")
	up.Flags().StringSliceVar(&opts.NodePools, "pools", []string{"worker"}, "pools the nodes join, in turn")
	up.Flags().StringSliceVar(&opts.CustomPools, "custom-pools", nil, "custom pools to create (they inherit worker)")

	var pool string
	join := &cobra.Command{
		Use:   "join",
		Short: "Provision one more machine the real way: Ignition from the pool's pointer config, then an agent",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			name, err := devcluster.Join(cmd.Context(), dir, pool, toolsDir, exe)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "node %s joined pool %s and is Done\n", name, pool)
			return nil
		},
	}
	join.Flags().StringVar(&pool, "pool", "worker", "pool the new machine boots into")

	down := &cobra.Command{
		Use:   "down",
		Short: "Power off every machine and stop every process the dev cluster started",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return devcluster.Down(dir) },
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the dev cluster's machines (state, boots, image) and processes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := devcluster.LoadState(dir)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintf(w, "API server\t%s\nserver\t%s\n\nMACHINE\tSTATE\tBOOTS\tSINCE\tIMAGE\tLAST EXIT\n", st.APIServerURL, st.ServerURL)
			for _, name := range st.Machines {
				ms, err := machine.ReadStatus(devcluster.MachineDir(dir, name))
				if err != nil {
					fmt.Fprintf(w, "%s\t?\t\t\t\t%v\n", name, err)
					continue
				}
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", name, ms.Observed(), ms.Boots, ms.Since.Format("15:04:05"), ms.Image, ms.LastExit)
			}
			fmt.Fprintf(w, "\nPROCESS\tPID\tRUNNING\tLOG\n")
			for name, p := range st.Processes {
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\n", name, p.PID, devcluster.Alive(p.PID), p.Log)
			}
			return w.Flush()
		},
	}
	dev.AddCommand(up, join, down, status, newDevExecCommand(&dir), newDevPowerLossCommand(&dir), newDevImageCommand(&dir), newDevLoadImageCommand(&dir), newDevUpgradeCommand(&dir), newDevMachineCommand(), newPlatformFactsCommand())
	return dev
}
