package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mco-dev/mco/internal/clientconfig"
	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/reboot"
)

func newDaemonCommand() *cobra.Command {
	var kubeconfig, metricsAddr string
	var simulatedReboot bool
	opts := daemon.Options{}
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Run the node agent: apply the node's desired rendered config, safely",
		Long: `Run the node agent for one node (--node, default $NODE_NAME).

It moves the node from its currentConfig to its desiredConfig annotation: checks the disk
still holds the current config (drift makes the node Degraded, nothing is overwritten), checks
the change can be made on a running node, plans the disruption (NodeDisruptionPolicy), asks
for a drain when the plan needs one, writes files, units and SSH keys under --root as one
crash-safe transaction, reloads, restarts or reboots, and reports Done.

In a pod the host root is mounted and given as --root /rootfs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := clientconfig.Load(kubeconfig)
			if err != nil {
				return err
			}
			if simulatedReboot {
				cs, err := kubernetes.NewForConfig(cfg)
				if err != nil {
					return err
				}
				node := reboot.SimulatedNode{Nodes: cs, Node: opts.NodeName}
				if err := node.MarkBooted(cmd.Context()); err != nil {
					return err
				}
				opts.Rebooter = node
				// A simulated node has no OS image to switch: record OS changes instead, so they
				// still go through drain, stage and reboot like on a real node.
				opts.OS = osimage.Simulated{Root: opts.Root}
			}
			reg := prometheus.NewRegistry()
			opts.Metrics = reg
			if err := serveMetrics(metricsAddr, reg); err != nil {
				return err
			}
			return daemon.Run(ctrl.SetupSignalHandler(), cfg, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.NodeName, "node", os.Getenv("NODE_NAME"), "name of the Node this agent manages (default $NODE_NAME)")
	f.StringVar(&opts.Root, "root", "/", "where the node's root file system is mounted")
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	f.DurationVar(&opts.DriftInterval, "drift-check-interval", 30*time.Second, "period of the drift check between file events")
	f.DurationVar(&opts.DrainTimeout, "drain-timeout", time.Hour, "how long to wait for the drain controller before reporting Degraded")
	f.StringVar(&metricsAddr, "metrics-bind-address", "127.0.0.1:8797", "address of the Prometheus metrics endpoint; 0 disables")
	f.BoolVar(&simulatedReboot, "simulated-reboot", false, "simulated node of the dev cluster: record OS changes under the root and restart the agent process instead of rebooting")
	cmd.AddCommand(newDaemonRevertCommand())
	return cmd
}

func newDaemonRevertCommand() *cobra.Command {
	var root string
	cmd := &cobra.Command{
		Use:   "revert",
		Short: "Return a node root to its state before any MachineConfig",
		Long: `Undo what MachineConfigs did to a node root, using the agent's ownership record under
<root>/etc/machine-config-daemon: each file, unit, dropin and SSH key file of the committed
config gets its original back (orig/<path>.mcdorig) or is deleted, core's password hash is
restored, and currentconfig is removed. Files no MachineConfig mentioned are left alone.
Stop the agent first.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			name, err := daemon.Revert(cmd.Context(), root, nil)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "reverted %s: %s no longer holds any MachineConfig content\n", name, root)
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", "/", "where the node's root file system is mounted")
	return cmd
}

func serveMetrics(addr string, reg *prometheus.Registry) error {
	if addr == "" || addr == "0" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "metrics server:", err)
		}
	}()
	return nil
}
