package main

import (
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mco-dev/mco/internal/devcluster"
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
		Short: "Run a whole mco cluster on this machine (etcd, kube-apiserver, controller, server, simulated nodes)",
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
mco server, then provision --nodes machines: each boots with the real Ignition client from its
pool's <pool>-user-data-managed pointer config, is registered as a Ready Node and runs a real
mco daemon on its own root (DIR/nodes/<name>/root). A reboot restarts the agent process.`,
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
	up.Flags().IntVar(&opts.Nodes, "nodes", 3, "number of simulated nodes")
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
		Short: "Stop every process the dev cluster started",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return devcluster.Down(dir) },
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the dev cluster's processes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := devcluster.LoadState(dir)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintf(w, "API server\t%s\nserver\t%s\n\nPROCESS\tPID\tRUNNING\tLOG\n", st.APIServerURL, st.ServerURL)
			for name, p := range st.Processes {
				fmt.Fprintf(w, "%s\t%d\t%v\t%s\n", name, p.PID, devcluster.Alive(p.PID), p.Log)
			}
			return w.Flush()
		},
	}
	dev.AddCommand(up, join, down, status)
	return dev
}
