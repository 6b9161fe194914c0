//go:build !nodeagent && !mcoserver && !mcocontroller

package main

import "github.com/spf13/cobra"

// addCommands adds every command: this is the full mco.
func addCommands(root *cobra.Command) {
	root.AddCommand(newVersionCommand())
	root.AddCommand(newRenderCommand(), newValidateCommand(), newPlanCommand())
	root.AddCommand(newServerCommand())
	root.AddCommand(newControllerCommand())
	root.AddCommand(newDaemonCommand())
	root.AddCommand(newDevCommand())
	root.AddCommand(newStatusCommand(), newRolloutCommand())
	root.AddCommand(newExplainCommand(), newAdoptCommand(), newHoldCommand())
	root.AddCommand(newDiagnoseCommand())
	root.AddCommand(newNodeCommand())
}
