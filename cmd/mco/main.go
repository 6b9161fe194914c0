// Command mco is the single binary of the machine config operator: every component (controller,
// server, node daemon) and every admin tool is a subcommand.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(exitCode(err))
	}
}
