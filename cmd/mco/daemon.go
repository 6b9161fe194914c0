//go:build !mcoserver

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/mco-dev/mco/internal/clientconfig"
	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/daemon/bootguard"
	"github.com/mco-dev/mco/internal/metricsauth"
	"github.com/mco-dev/mco/internal/pinnedimages"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/serverguard"
)

func newDaemonCommand() *cobra.Command {
	var kubeconfig, podNetworks, guardPorts, guardTable, metricsHost string
	var metrics metricsauth.Endpoint
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
			if metrics.Address, err = metricsauth.WithHost(metrics.Address, metricsHost); err != nil {
				return err
			}
			reg := prometheus.NewRegistry()
			if metrics.Served() { // else nobody reads them: no kubelet health checks either
				opts.Metrics = reg
			}
			if opts.Guard, err = guardOptions(podNetworks, guardPorts, guardTable, opts.Guard); err != nil {
				return err
			}
			if _, err := daemon.ServeMetrics(metrics, cfg, reg, cmd.ErrOrStderr()); err != nil {
				return err
			}
			return daemon.Run(signalContext(), cfg, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.NodeName, "node", os.Getenv("NODE_NAME"), "name of the Node this agent manages (default $NODE_NAME)")
	f.StringVar(&opts.Root, "root", "/", "where the node's root file system is mounted")
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	f.DurationVar(&opts.DriftInterval, "drift-check-interval", 30*time.Second, "period of the drift check between file events")
	f.DurationVar(&opts.DrainTimeout, "drain-timeout", time.Hour, "how long to wait for the drain controller before reporting Degraded")
	f.StringVar(&metrics.Address, "metrics-bind-address", "127.0.0.1:8797", "address of the Prometheus metrics endpoint; 0 disables. Plain HTTP on loopback; on any other address HTTPS, and only to bearer tokens the API server accepts whose user may get /metrics")
	f.StringVar(&metricsHost, "metrics-bind-host", "", "listen for metrics on this host (e.g. the node's address, $(NODE_IP) from the downward API) with --metrics-bind-address's port")
	f.StringVar(&metrics.CertDir, "metrics-cert-dir", "", "directory with tls.crt and tls.key for metrics off loopback, read again when they change (default: a self-signed certificate)")
	f.StringVar(&guardPorts, "server-guard-ports", fmt.Sprintf("%d,%d", protocol.ServerPort, protocol.ServerInsecurePort),
		"the Machine Config Server's ports this node's pods may not reach; empty: pods are not kept off them")
	f.StringVar(&guardTable, "server-guard-table", serverguard.DefaultTable, "nftables table (family inet) of those rules: one per cluster on a host that runs nodes of several")
	f.StringVar(&podNetworks, "pod-networks", os.Getenv("POD_NETWORKS"), "CIDRs of the pods' addresses, comma-separated (default $POD_NETWORKS; empty: the Node's spec.podCIDRs)")
	f.StringVar(&opts.Guard.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "namespace of the agent's DaemonSet (default $POD_NAMESPACE): when it goes, the server guard goes too")
	f.StringVar(&opts.Guard.DaemonSet, "daemonset", "mco-daemon", "name of the agent's DaemonSet: when it goes, the server guard goes too")
	opts.PinnedImagesMinFree = pinnedimages.DefaultMinFree.DeepCopy()
	f.Var(&quantityFlag{&opts.PinnedImagesMinFree}, "pinned-images-min-free",
		"ephemeral storage (a Kubernetes quantity) that must stay free after pulling a PinnedImageSet's images; a set that would leave less is refused before any pull (OpenShift's 16Gi)")
	cmd.AddCommand(newDaemonRevertCommand(), newDaemonRecoverCommand(), newDaemonFirstBootCommand(), newDaemonBootGuardCommand())
	return cmd
}

// quantityFlag is a resource.Quantity as a flag ("16Gi", "500M").
type quantityFlag struct{ q *resource.Quantity }

func (f *quantityFlag) String() string {
	if f.q == nil {
		return ""
	}
	return f.q.String()
}

func (f *quantityFlag) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return err
	}
	if q.Sign() < 0 {
		return fmt.Errorf("%s is negative", s)
	}
	*f.q = q
	return nil
}

func (f *quantityFlag) Type() string { return "quantity" }

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

func newDaemonRecoverCommand() *cobra.Command {
	var root string
	var abandon bool
	cmd := &cobra.Command{
		Use:   "recover",
		Short: "Settle an update the agent could not roll back: roll it back now, or abandon it",
		Long: `When a rollback fails (a path replaced by hand, a full disk, a lost backup), the update stays
journaled in <root>/etc/machine-config-daemon/journal, the Node is Degraded (event JournalStuck)
with the update, the error and the time of the next retry, and the agent retries on a backoff
(5 s doubling to 5 min). No other update starts while the journal is there.

Without --abandon: repair what the error names, then run this. It rolls the update back now (or
finishes one that had committed) and says which config the root is in; it exits 1 while the
rollback still fails. The running agent notices at its next retry.

With --abandon: the rollback is given up. The journal and its backups are kept in
<root>/etc/machine-config-daemon/journal.abandoned-<time>/ and dropped, and the force file
<root>/run/machine-config-daemon-force is created: the root is in neither config now, and the
agent rewrites the node's desired config in full (and reboots) at its next retry. Creating the
force file yourself does the same, as in OpenShift.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if abandon {
				ab, err := daemon.AbandonJournal(root, time.Now())
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), daemon.AbandonReport(ab, root))
				return nil
			}
			rec, err := daemon.RecoverRoot(cmd.Context(), root)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), daemon.RecoveryReport(rec, root))
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", "/", "where the node's root file system is mounted")
	cmd.Flags().BoolVar(&abandon, "abandon", false, "give the rollback up: keep and drop the journal, create the force file")
	return cmd
}

func newDaemonFirstBootCommand() *cobra.Command {
	opts := daemon.FirstBootOptions{}
	cmd := &cobra.Command{
		Use:   "firstboot",
		Short: "On a machine's first boot, before the kubelet: apply what Ignition cannot, reboot once if needed",
		Long: `Run by the mco-firstboot.service unit the served config lays down, ordered before the kubelet.
It reads the MachineConfig the server encapsulated (/etc/ignition-machine-config-encapsulated.json),
compares what booted (kernel command line, OS image) with it, stages the difference with the host's
OS backend (kernel arguments, kernel type, extensions, OS image) and reboots once. After that
reboot it verifies; a field the backend cannot apply, or a change still not in effect, is written
to /etc/machine-config-daemon/firstboot-failed and the agent reports the node Degraded with it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := signalContext()
			result, err := daemon.FirstBoot(ctx, opts)
			switch result {
			case daemon.FirstBootRebooting:
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), "first boot: OS changes staged; rebooting")
				<-ctx.Done() // the reboot stops this unit
				return nil
			case daemon.FirstBootFailed:
				// Not a unit failure: the kubelet must still start, so the agent can report why.
				fmt.Fprintln(cmd.ErrOrStderr(), "first boot failed; the agent reports it:", err)
				return nil
			}
			return err
		},
	}
	cmd.Flags().StringVar(&opts.Root, "root", "/", "where the node's root file system is mounted")
	return cmd
}

func newDaemonBootGuardCommand() *cobra.Command {
	opts := daemon.BootGuardOptions{}
	cmd := &cobra.Command{
		Use:   "boot-guard",
		Short: "After an update's reboot: revert the update if the kubelet and the Node do not come back in time",
		Long: `Run by mco-boot-guard.service, which the agent installs and enables before it reboots a node for
an update (with a copy of its own binary at /usr/local/bin/mco-boot-guard). It does not depend on
the kubelet or a pod. On the boot after the update it waits until the kubelet is running and
healthy (its healthz) and the Node is Ready (read with the kubelet's own kubeconfig), or until the
pool's node boot timeout (MachineConfigPoolRollout spec.nodeBootTimeout, default 10m) counted
from the boot. Healthy: it removes its record (/etc/machine-config-daemon/boot-guard.json) and
exits. Not: it reverts the update's transaction to the previous config (files, units, kernel
arguments, OS image), writes /etc/machine-config-daemon/boot-failed for the agent to report
(Degraded, NodeBootFailed), and reboots, at most once per target.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := signalContext()
			d, err := daemon.BootGuard(ctx, opts)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "boot guard:", d.Why)
			if d.Action == bootguard.Revert {
				<-ctx.Done() // the reboot stops this unit
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Root, "root", "/", "where the node's root file system is mounted")
	return cmd
}

// guardOptions reads the server guard's flags.
func guardOptions(podNetworks, ports, table string, g daemon.GuardOptions) (daemon.GuardOptions, error) {
	nets, err := serverguard.ParsePrefixes(podNetworks)
	if err != nil {
		return g, fmt.Errorf("--pod-networks: %w", err)
	}
	g.PodNetworks = nets
	for _, p := range strings.FieldsFunc(ports, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return g, fmt.Errorf("--server-guard-ports: %q is not a port", p)
		}
		g.Ports = append(g.Ports, uint16(n))
	}
	if len(g.Ports) == 0 {
		return g, nil
	}
	fw, err := serverguard.Open(table)
	if err != nil {
		return g, err
	}
	g.Firewall = fw
	return g, nil
}
