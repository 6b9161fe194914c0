package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"
)

// exitError carries a specific process exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "mco",
		Short: "Declarative operating system management for Kubernetes nodes",
		Long: `mco manages the operating system of Kubernetes nodes declaratively.

Admins write MachineConfigs (Ignition files, systemd units, SSH keys, kernel arguments,
OS image) and group nodes into MachineConfigPools; mco renders one config per pool,
serves it to new machines as Ignition, and rolls it onto existing nodes safely.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	addCommands(root)
	return root
}

// signalContext ends on SIGTERM or SIGINT; a second signal exits at once. controller-runtime's
// signals package, not its manager: the node build stays free of the manager.
func signalContext() context.Context { return signals.SetupSignalHandler() }
