package main

import (
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// kubectl runs a plugin named kubectl-<name> found on PATH for `kubectl <name> ...`, and for
// completing `kubectl <name> ...` runs kubectl_complete-<name> with the words typed after the
// plugin's name. Both are links to this binary.
const (
	pluginExecutable     = "kubectl-mco"
	completionExecutable = "kubectl_complete-mco"
	pluginDisplayName    = "kubectl mco"
)

// invocation is how the binary was started, from the base name it was run as: as itself
// ("mco"), as the kubectl plugin, or as the plugin's completion executable, which answers
// like `mco __complete ARGS...` (cobra's completion protocol, which kubectl speaks too).
func invocation(argv0 string, args []string) (displayName string, cmdArgs []string) {
	switch strings.TrimSuffix(filepath.Base(argv0), ".exe") {
	case pluginExecutable:
		return pluginDisplayName, args
	case completionExecutable:
		return pluginDisplayName, append([]string{cobra.ShellCompRequestCmd}, args...)
	}
	return "", args
}

// asPlugin makes usage, help and examples say `kubectl mco` instead of `mco`.
func asPlugin(root *cobra.Command, displayName string) {
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = displayName
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Example = pluginExamples(c.Example, displayName)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// pluginExamples rewrites example lines that start with "mco " (after indentation).
func pluginExamples(example, displayName string) string {
	lines := strings.Split(example, "\n")
	for i, l := range lines {
		rest := strings.TrimLeft(l, " \t")
		if after, ok := strings.CutPrefix(rest, "mco "); ok {
			lines[i] = l[:len(l)-len(rest)] + displayName + " " + after
		}
	}
	return strings.Join(lines, "\n")
}
