//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
)

// newDevCutOffCommand cuts a dev machine off the network, as the chaos suite's network-cut does,
// so the scenario can be tried by hand.
func newDevCutOffCommand(dir *string) *cobra.Command {
	var connect bool
	c := &cobra.Command{
		Use:   "cut-off NODE",
		Short: "Cut a dev machine off the network (the API server, the other machines, the server), or connect it again",
		Long: `Drops every packet from or to the machine's node address that passes this host, as a failed
switch port would: its card stays up and its connections hang. The machine runs on; its kubelet
goes NotReady after the controller manager's grace period. --connect undoes it.`,
		Example: `  mco dev cut-off worker-1            # in the middle of its update
  kubectl get nodes -w                  # worker-1 NotReady after ~40 s
  mco dev cut-off worker-1 --connect    # it finishes its update and reports Done`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := devcluster.CutOff(*dir, args[0], !connect); err != nil {
				return err
			}
			if connect {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is connected again\n", args[0])
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is cut off the network (mco dev cut-off %s --connect undoes it)\n", args[0], args[0])
			}
			return nil
		},
	}
	c.Flags().BoolVar(&connect, "connect", false, "connect the machine again")
	return c
}

// newDevServerDownCommand makes the Machine Config Server unreachable, as the chaos suite's
// server-down-join does.
func newDevServerDownCommand(dir *string) *cobra.Command {
	var up bool
	c := &cobra.Command{
		Use:   "server-down",
		Short: "Make the Machine Config Server unreachable (api-int and every machine's address drop its port), or reachable again",
		Long: `The server's process runs on, as behind a failed load balancer. A machine joining meanwhile
(mco dev join) retries its Ignition fetch until the server is back. --up undoes it.`,
		Example: `  mco dev server-down
  mco dev join &        # Ignition retries
  mco dev server-down --up`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := devcluster.ServerDown(*dir, !up); err != nil {
				return err
			}
			if up {
				fmt.Fprintln(cmd.OutOrStdout(), "the Machine Config Server is reachable again")
			} else {
				fmt.Fprintln(cmd.OutOrStdout(), "the Machine Config Server is unreachable (mco dev server-down --up undoes it)")
			}
			return nil
		},
	}
	c.Flags().BoolVar(&up, "up", false, "make the server reachable again")
	return c
}
