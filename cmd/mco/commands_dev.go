//go:build !nodeagent && !mcoserver && !nodev

package main

import "github.com/spf13/cobra"

// addDevCommands adds what drives dev clusters and their machines (mco dev) and mco diagnose,
// which also reads a dev cluster's machines: the CLI on a developer's machine (make build's
// bin/mco) has them, the image's mco (tag nodev) does not, so no pod links the dev harness.
func addDevCommands(root *cobra.Command) {
	root.AddCommand(newDevCommand(), newDiagnoseCommand())
}
