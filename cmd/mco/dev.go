//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/dev/machine"
	devnet "github.com/mco-dev/mco/internal/dev/network"
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
	var layout string
	install := true
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

--layout kubeadm builds the cluster the way kubeadm users have theirs instead: no bootstrap
controller or server, master-0 and the --nodes workers boot a distribution image (no Ignition,
nothing of mco) with what kubeadm join leaves on a node (kubelet.service with kubeadm's drop-in,
a bootstrap token, containerd), master-0 labelled and tainted as kubeadm's control plane and
the workers with no role label; then mco is installed as README's "Install on a kubeadm cluster"
says (config/crd, then an overlay of config/kubeadm), unless --install=false.
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
			l, err := devcluster.ParseLayout(layout)
			if err != nil {
				return err
			}
			opts.Layout, opts.NoInstall = l, !install
			if err := devcluster.Up(cmd.Context(), opts); err != nil {
				return err
			}
			abs, _ := filepath.Abs(dir)
			st, err := devcluster.LoadState(abs)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "\ndev cluster up in %s: layout %s, machines %v, mco %s\n  export KUBECONFIG=%s/kubeconfig\n  %s/kubectl get mcp,nodes\n  mco dev down --dir %s\n",
				abs, l, st.Machines, installed(l, install), abs, toolsDir, abs)
			return nil
		},
	}
	up.Flags().IntVar(&opts.Nodes, "nodes", 3, "number of machines")
	up.Flags().StringSliceVar(&opts.NodePools, "pools", []string{"worker"}, "pools the nodes join, in turn")
	up.Flags().StringSliceVar(&opts.CustomPools, "custom-pools", nil, "custom pools to create (they inherit worker)")
	up.Flags().StringVar(&layout, "layout", string(devcluster.LayoutOpenShift), "how machines are built: openshift (Ignition from mco's server) or kubeadm (a distribution image as kubeadm join leaves it, mco installed afterwards)")
	up.Flags().BoolVar(&install, "install", true, "kubeadm layout: install mco once the nodes are up (false: leave it to README's kubeadm install)")
	up.Flags().IntVar(&opts.NetworkSlot, "network-slot", 0, fmt.Sprintf("which of this host's %d dev networks the cluster uses (0: nodes on 10.87.0.0/24; n: 10.87.n.0/24, Services 10.(96+n).0.0/16, pods 10.(244+n).0.0/16), to run clusters side by side", devnet.Slots))

	var pool string
	join := &cobra.Command{
		Use:   "join",
		Short: "Provision one more machine the cluster's way: Ignition from the pool's pointer config (kubeadm layout: kubeadm join's files), then an agent",
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
			st, err := devcluster.LoadState(dir)
			if err != nil {
				return err
			}
			if st.ClusterLayout() == devcluster.LayoutKubeadm {
				fmt.Fprintf(cmd.OutOrStdout(), "node %s joined as kubeadm join does and is Ready\n", name)
				return nil
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
			printInstallSettings(w, st)
			fmt.Fprintf(w, "\nMACHINE\tSTATE\tBOOTS\tSINCE\tIMAGE\tLAST EXIT\n")
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
	dev.AddCommand(up, join, down, status, newDevExecCommand(&dir), newDevPowerLossCommand(&dir), newDevCutOffCommand(&dir), newDevServerDownCommand(&dir), newDevImageCommand(&dir), newDevLoadImageCommand(&dir), newDevUpgradeCommand(&dir), newDevMachineCommand(), newPlatformFactsCommand())
	return dev
}

// installed says how mco came onto a dev cluster of layout.
func installed(layout devcluster.Layout, install bool) string {
	switch {
	case layout != devcluster.LayoutKubeadm:
		return "installed from config/default before the workers booted"
	case install:
		return "installed afterwards from config/kubeadm"
	}
	return "not installed (README: Install on a kubeadm cluster)"
}

// printInstallSettings shows the cluster's layout and the values README's install steps ask for,
// as this dev cluster has them.
func printInstallSettings(w io.Writer, st *devcluster.State) {
	fmt.Fprintf(w, "layout\t%s\n", st.ClusterLayout())
	set, err := devcluster.InstallSettings(st)
	if err != nil {
		fmt.Fprintf(w, "install settings\t%v\n", err)
		return
	}
	served := "api-int, led to the server's pods on the control-plane machine"
	if st.ServerURL == "" {
		served = "api-int, not yet led anywhere"
	}
	fmt.Fprintf(w, "image\t%s\t(loaded into every machine's containerd: install it by this tag)\n", set.Image)
	fmt.Fprintf(w, "serverHost\t%s\t(%s)\n", set.ServerHost, served)
	fmt.Fprintf(w, "apiServerURL\t%s\t(the API server, as every kubelet reaches it)\n", set.APIServerURL)
	fmt.Fprintf(w, "podNetworks\t%s\t(the pods' addresses: kept off the Machine Config Server)\n", set.PodNetworks)
}
