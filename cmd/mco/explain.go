//go:build !nodeagent && !mcoserver

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/explain"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/internal/scheme"
)

func newExplainCommand() *cobra.Command {
	var kubeconfig, output string
	var threshold, stallThreshold time.Duration
	cmd := &cobra.Command{
		Use:   "explain node/NAME | mcp/NAME",
		Short: "Say in plain words what a node or pool is doing, why it is stuck or degraded, what mco does next and what you can do",
		Long: `Explain one node or MachineConfigPool: what mco is doing with it (which step of an update),
why it is stuck or degraded (a drifted file, a drain blocked by a PodDisruptionBudget, an
unreconcilable change, a node not back from its reboot, a paused pool, a pacing policy's
canary, soak or maintenance window), what mco will do next, and what you can do, with the
evidence: the Node's annotations and conditions, its MachineConfigNode, the pool's conditions,
the policy's status and recent events. For a draining node it reads the pods on it and their
PodDisruptionBudgets, and names the pods the drain still waits for and the budgets refusing
them. Accepts node/NAME (nodes/NAME) and mcp/NAME (machineconfigpool/NAME). -o json prints
the same for programs.`,
		Example: `  mco explain node/worker-1
  mco explain mcp/worker -o json`,
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return explainTargets(cmd.Context(), kubeconfig, toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("--output: unknown format %q (want text or json)", output)
			}
			node, isNode := cutPrefixes(args[0], "node/", "nodes/")
			pool, isPool := cutPrefixes(args[0], "mcp/", "machineconfigpool/", "machineconfigpools/")
			if !isNode && !isPool {
				return fmt.Errorf("want node/NAME or mcp/NAME, got %q", args[0])
			}
			c, _, err := scheme.NewClient(kubeconfig)
			if err != nil {
				return err
			}
			snap, err := explain.Snapshot(cmd.Context(), c, node, threshold)
			if err != nil {
				return err
			}
			snap.StallThreshold = stallThreshold
			var x explain.Explanation
			if isNode {
				x, err = explain.Node(snap, node)
			} else {
				x, err = explain.Pool(snap, pool)
			}
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(x)
			}
			return explain.Write(cmd.OutOrStdout(), x)
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	cmd.Flags().DurationVar(&stallThreshold, "update-stall-threshold", rollout.DefaultStallThreshold, "the controller's --update-stall-threshold: how long a Ready node may take to finish moving to the config it was given before it counts as stalled")
	cmd.Flags().DurationVar(&threshold, "node-not-ready-threshold", rollout.DefaultNotReadyThreshold, "the controller's --node-not-ready-threshold: how long an updating node may be NotReady before it counts as not back")
	return cmd
}

// explainTargets completes the argument: the kinds first ("node/", "mcp/"), then the names of
// that kind from the cluster. Nothing when the cluster cannot be reached: completion must not
// print errors into the shell.
func explainTargets(ctx context.Context, kubeconfig, toComplete string) []cobra.Completion {
	kind, _, found := strings.Cut(toComplete, "/")
	if !found {
		return []cobra.Completion{"node/", "mcp/"}
	}
	c, _, err := scheme.NewClient(kubeconfig)
	if err != nil {
		return nil
	}
	var names []string
	switch kind {
	case "node", "nodes":
		var list corev1.NodeList
		if c.List(ctx, &list) == nil {
			for _, n := range list.Items {
				names = append(names, n.Name)
			}
		}
	case "mcp", "machineconfigpool", "machineconfigpools":
		var list mcfgv1.MachineConfigPoolList
		if c.List(ctx, &list) == nil {
			for _, p := range list.Items {
				names = append(names, p.Name)
			}
		}
	}
	var out []cobra.Completion
	for _, name := range names {
		if full := kind + "/" + name; strings.HasPrefix(full, toComplete) {
			out = append(out, full)
		}
	}
	return out
}
