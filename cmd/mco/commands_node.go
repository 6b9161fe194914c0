//go:build nodeagent

package main

import "github.com/spf13/cobra"

// addCommands adds what runs on a node: the agent (with first boot and revert) and, for dev
// machines, their platform facts. Built as bin/mco-node (`make build`, tag nodeagent), it
// links none of the controller, server or CLI code, so the agent touches far fewer pages.
func addCommands(root *cobra.Command) {
	dev := &cobra.Command{Use: "dev", Short: "Dev machines only"}
	dev.AddCommand(newPlatformFactsCommand())
	root.AddCommand(newVersionCommand(), newDaemonCommand(), dev)
}
