//go:build mcocontroller

package main

import "github.com/spf13/cobra"

// addCommands adds the controller alone. Built as bin/mco-controller (`make build`, tag
// mcocontroller) for the controller's Deployment, it links none of the CLI's views, the agent,
// the server or the dev harness (machines, dev clusters, the image builder): the image carries
// what its pods run and nothing else.
func addCommands(root *cobra.Command) {
	root.AddCommand(newVersionCommand(), newControllerCommand())
}
