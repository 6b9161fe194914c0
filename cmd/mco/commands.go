//go:build !nodeagent && !mcoserver

package main

import "github.com/spf13/cobra"

// addCommands adds every command: this is the full mco (the image's, built with the tag nodev,
// has every one but the dev harness's: commands_dev.go).
func addCommands(root *cobra.Command) {
	root.AddCommand(newVersionCommand())
	root.AddCommand(newRenderCommand(), newValidateCommand(), newPlanCommand())
	root.AddCommand(newServerCommand())
	root.AddCommand(newControllerCommand())
	root.AddCommand(newDaemonCommand())
	root.AddCommand(newStatusCommand(), newRolloutCommand())
	root.AddCommand(newExplainCommand(), newAdoptCommand(), newHoldCommand())
	addDevCommands(root)
	root.AddCommand(newNodeCommand())
}
