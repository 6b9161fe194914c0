//go:build mcoserver

package main

import "github.com/spf13/cobra"

// addCommands adds the Machine Config Server alone. Built as bin/mco-server (`make build`, tag
// mcoserver) for the server's DaemonSet, it links none of the controller, agent or CLI code:
// fewer packages initialized at start, so fewer of the executable's pages resident and a
// smaller heap on every control-plane node (bench/mcs/run.sh measures it).
func addCommands(root *cobra.Command) {
	root.AddCommand(newVersionCommand(), newServerCommand())
}
