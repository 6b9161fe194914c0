// Command mco is the single binary of the machine config operator: every component (controller,
// server, node daemon) and every admin tool is a subcommand.
package main

import (
	"fmt"
	"os"
)

func main() {
	root := newRootCommand()
	// Run as kubectl-mco (a kubectl plugin) or kubectl_complete-mco (its completion), by link.
	displayName, args := invocation(os.Args[0], os.Args[1:])
	if displayName != "" {
		asPlugin(root, displayName)
	}
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(exitCode(err))
	}
}
