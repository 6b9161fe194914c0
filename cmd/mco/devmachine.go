//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/spf13/cobra"

	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/dev/machine"
)

// newDevMachineCommand is the plumbing of a dev machine: its supervisor and its boot stage.
// People use `mco dev exec`, `mco dev status` and `mco dev down` instead.
func newDevMachineCommand() *cobra.Command {
	m := &cobra.Command{Use: "machine", Short: "Plumbing of a dev machine (supervisor, boot stage)", Hidden: true}
	var dir string
	supervise := &cobra.Command{
		Use:   "supervise",
		Short: "Play firmware and boot loader for the machine in --dir: boot it until it powers off",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := machine.Load(dir)
			if err != nil {
				return err
			}
			return machine.Supervise(signalContext(), c)
		},
	}
	boot := &cobra.Command{
		Use:   "boot",
		Short: "PID 1 of a new machine's namespaces: mount its disk and image, run Ignition on first boot, exec systemd",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := machine.Load(dir)
			if err != nil {
				return err
			}
			return machine.Boot(cmd.Context(), c)
		},
	}
	for _, c := range []*cobra.Command{supervise, boot} {
		c.Flags().StringVar(&dir, "dir", "", "the machine's directory")
		_ = c.MarkFlagRequired("dir")
	}
	m.AddCommand(supervise, boot)
	return m
}

// newDevExecCommand runs a command inside a dev machine, like `kubectl exec` into a node.
func newDevExecCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "exec NODE -- COMMAND [ARG...]",
		Short: "Run a command inside a dev machine (its root, PID, mount, UTS and IPC namespaces)",
		Example: `  mco dev exec worker-0 -- cat /proc/cmdline
  mco dev exec worker-0 -- systemctl status kubelet
  mco dev exec worker-0 -- journalctl -u kubelet -n 50`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := machine.Command(cmd.Context(), devcluster.MachineDir(*dir, args[0]), args[1:]...)
			if err != nil {
				return err
			}
			c.Stdin, c.Stdout, c.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
			err = c.Run()
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				return &exitError{code: exit.ExitCode(), err: fmt.Errorf("%s in %s: %w", args[1], args[0], err)}
			}
			return err
		},
	}
}

// newDevPowerLossCommand cuts a dev machine's power: its init is killed, as a host losing power
// stops mid-write; its supervisor boots it again.
func newDevPowerLossCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "power-loss NODE",
		Short: "Cut a dev machine's power (kill its init); it boots again from its disk",
		Example: `  mco dev power-loss worker-1
  mco dev status      # worker-1: boots +1, last exit "power loss"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := machine.PowerLoss(devcluster.MachineDir(*dir, args[0])); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s lost power; its supervisor boots it again\n", args[0])
			return nil
		},
	}
}

// newDevImageCommand adds an OS image to the dev cluster's registry, so a MachineConfig's
// osImageURL can name it and the machines rebase to it.
func newDevImageCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "image REF",
		Short: "Add a dev OS image (this host's OS plus the mco node build) that osImageURL can name",
		Example: `  mco dev image mco-dev.local/os:2
  # then a MachineConfig with spec.osImageURL: mco-dev.local/os:2 rebases each machine`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			st, err := devcluster.LoadState(*dir)
			if err != nil {
				return err
			}
			if err := devcluster.BuildNodeImage(*dir, args[0], exe, st); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "image %s is in %s\n", args[0], devcluster.ImagesDir(*dir))
			return nil
		},
	}
}

// newDevLoadImageCommand imports a container image archive into every machine's containerd.
func newDevLoadImageCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "load-image ARCHIVE",
		Short: "Import a container image archive (e.g. bin/mco-image.tar from make image) into every machine's containerd, as kind load does",
		Example: `  make image && mco dev load-image bin/mco-image.tar
  # pods can then run ghcr.io/mco-dev/mco:<version> with imagePullPolicy: Never or IfNotPresent`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := devcluster.LoadImage(cmd.Context(), *dir, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s loaded into every running machine\n", args[0])
			return nil
		},
	}
}

// newDevUpgradeCommand installs another mco image over the dev cluster, as an admin upgrades.
func newDevUpgradeCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "upgrade ARCHIVE",
		Short: "Upgrade mco on the dev cluster to an image archive (make image): load it on every machine, then kubectl apply --server-side -k of the install overlay with its tag",
		Long: `Upgrade mco as an admin does: make the new image available to every node (here: imported
into each running machine's containerd and bound into the dev OS images for machines that boot
later, where a real cluster would pull it from a registry), then apply the install overlay
(DIR/install, config/default) with the image's tag. Kubernetes replaces the controller's,
server's and agents' pods by their update strategies; a rollout in flight goes on.`,
		Example: `  make image VERSION=v2 && mco dev upgrade --dir _out/demo bin/mco-image.tar`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tag, err := devcluster.Upgrade(cmd.Context(), *dir, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "applied config/default with ghcr.io/mco-dev/mco:%s; watch: kubectl -n openshift-machine-config-operator get pods -w\n", tag)
			return nil
		},
	}
}
