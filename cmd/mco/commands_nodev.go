//go:build nodev

package main

import "github.com/spf13/cobra"

// addDevCommands adds nothing in the image's mco: see commands_dev.go.
func addDevCommands(*cobra.Command) {}
