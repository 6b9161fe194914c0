//go:build !nodeagent && !mcoserver && !mcocontroller

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/daemon/plan"
	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/scheme"
)

// runLivePlan plans -f against the cluster: it only reads, calls changeplan.Live and prints.
func runLivePlan(cmd *cobra.Command, f planFlags) error {
	if len(f.files) == 0 && f.pool == "" {
		return fmt.Errorf("-f is needed: the manifests about to be applied (or --pool alone: the pool as it stands, its nodes behind its target and those waiting for adoption)")
	}
	if f.current != "" || f.osImageURL != "" || f.extensionsImage != "" {
		return fmt.Errorf("--current, --os-image-url and --base-os-extensions-image are for --offline; against a cluster they come from the cluster")
	}
	var found problems
	role := f.pool
	if role == "" {
		role = protocol.WorkerPool
	}
	set := &manifest.Set{}
	if len(f.files) > 0 {
		var err error
		set, err = manifest.Load(manifest.Options{FCOSRole: role}, f.files...)
		found.addLoad(err)
		if err := found.report(cmd, "bad input"); err != nil {
			return &exitError{code: 2, err: err}
		}
	}
	c, _, err := scheme.NewClient(f.kubeconfig)
	if err != nil {
		return err
	}
	cluster, err := readCluster(cmd.Context(), c)
	if err != nil {
		return err
	}
	if f.policy != "" {
		// A policy about to be applied with the change replaces the cluster's.
		if cluster.Policies, err = loadPolicies(f.policy); err != nil {
			return err
		}
	}
	report, err := changeplan.Live(cluster, appliedFrom(set), f.pool)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f.output == "json" {
		js, err := json.MarshalIndent(report, "", "  ")
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "%s\n", js); err != nil {
			return err
		}
	} else if err := printReport(out, report, set); err != nil {
		return err
	}
	if code := report.ExitCode(); code != 0 {
		return &exitError{code: code, err: errors.New(report.Why())}
	}
	return nil
}

// appliedFrom is the manifests with the JSON their files wrote, so a field a manifest leaves
// out is kept as kubectl apply keeps it.
func appliedFrom(set *manifest.Set) changeplan.Applied {
	out := changeplan.Applied{MachineConfigs: set.MachineConfigs, Pools: set.Pools, Manifests: changeplan.Manifests{}}
	for _, mc := range set.MachineConfigs {
		if src, ok := set.MachineConfigSource(mc.Name); ok {
			if js, ok := src.JSON(); ok {
				out.Manifests[changeplan.Key("MachineConfig", mc.Name)] = js
			}
		}
	}
	for _, p := range set.Pools {
		if src, ok := set.PoolSource(p.Name); ok {
			if js, ok := src.JSON(); ok {
				out.Manifests[changeplan.Key("MachineConfigPool", p.Name)] = js
			}
		}
	}
	return out
}

// readCluster lists what a live plan needs; MachineConfiguration cluster is optional, as it is
// for the agent (none, or no such kind served, means OpenShift's default policies).
func readCluster(ctx context.Context, c client.Client) (changeplan.Cluster, error) {
	var out changeplan.Cluster
	var pools mcfgv1.MachineConfigPoolList
	if err := c.List(ctx, &pools); err != nil {
		return out, fmt.Errorf("listing MachineConfigPools: %w", err)
	}
	var mcs mcfgv1.MachineConfigList
	if err := c.List(ctx, &mcs); err != nil {
		return out, fmt.Errorf("listing MachineConfigs: %w", err)
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return out, fmt.Errorf("listing Nodes: %w", err)
	}
	for i := range pools.Items {
		out.Pools = append(out.Pools, &pools.Items[i])
	}
	for i := range mcs.Items {
		out.MachineConfigs = append(out.MachineConfigs, &mcs.Items[i])
	}
	for i := range nodes.Items {
		out.Nodes = append(out.Nodes, &nodes.Items[i])
	}
	var err error
	if out.Policies, _, err = plan.ClusterPolicies(ctx, c); err != nil {
		return out, err
	}
	// Blocked and skipped drains are noted with their spec.drain step.
	if out.Rollouts, _, err = servedPolicies(ctx, c); err != nil {
		return out, fmt.Errorf("listing MachineConfigPoolRollouts: %w", err)
	}
	out.Now = time.Now()
	return out, nil
}

// printReport writes a live plan for people: one line per group, then each group's plan.
// printReport writes r as text. set holds the manifests applied (nil for none): a warning
// about one of them is placed in its file, as `mco validate` places it.
func printReport(w io.Writer, r *changeplan.Report, set *manifest.Set) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "POOL\tRENDERED\tNODES ON\tNODES\tDISRUPTION\n")
	for _, p := range r.Pools {
		if (len(p.Groups) == 0 && len(p.Adoptions) == 0) || p.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t%s\n", p.Pool, orNone(p.Rendered), map[bool]string{true: "error", false: "-"}[p.Error != ""])
		}
		for _, g := range p.Groups {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Pool, p.Rendered, orNone(g.Current), nodeList(g.Nodes), groupDisruption(g))
		}
		for _, a := range p.Adoptions {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Pool, orNone(p.Rendered), "(not adopted)", a.Node, adoptionDisruption(a))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if anyFlagged(r) {
		fmt.Fprintln(w, "* mid-update, with a reboot queued, or held: see the node's note below")
	}
	for _, p := range r.Pools {
		fmt.Fprintf(w, "\n=== pool %s: %s\n", p.Pool, p.Summary)
		for _, s := range p.Notes {
			fmt.Fprintf(w, "note: %s\n", s)
		}
		if p.Error != "" {
			fmt.Fprintf(w, "error: %s\n", p.Error)
		}
		for _, warning := range p.Warnings {
			if set != nil {
				fmt.Fprintln(w, warningLine(set, warning))
				continue
			}
			fmt.Fprintf(w, "warning: %s\n", warning)
		}
		for _, u := range p.Unreconcilable {
			fmt.Fprintf(w, "unreconcilable with the pool's target: %s\n", u)
		}
		for _, g := range p.Groups {
			if g.Adopting {
				fmt.Fprintf(w, "\n--- adopting: nodes mco did not boot, updated as their adoption plans said (%s)\n", nodeList(g.Nodes))
				for _, n := range g.Nodes {
					for _, s := range n.Notes {
						fmt.Fprintf(w, "%s: %s\n", n.Name, s)
					}
				}
				continue
			}
			fmt.Fprintf(w, "\n--- %s: nodes on %s (%s)\n", groupDisruption(g), g.Current, nodeList(g.Nodes))
			for _, n := range g.Nodes {
				for _, s := range n.Notes {
					fmt.Fprintf(w, "%s: %s\n", n.Name, s)
				}
			}
			if g.Error != "" {
				fmt.Fprintf(w, "error: %s\n", g.Error)
				continue
			}
			if err := printPlanDetails(w, g.Plan); err != nil {
				return err
			}
		}
		for _, a := range p.Adoptions {
			printAdoption(w, a)
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w)
		for _, s := range r.Notes {
			fmt.Fprintf(w, "note: %s\n", s)
		}
	}
	return nil
}

func nodeList(nodes []changeplan.Node) string {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
		if n.RebootPending || n.Moving || n.Held {
			names[i] += "*"
		}
	}
	return strings.Join(names, ",")
}

func anyFlagged(r *changeplan.Report) bool {
	for _, p := range r.Pools {
		for _, g := range p.Groups {
			if strings.Contains(nodeList(g.Nodes), "*") {
				return true
			}
		}
	}
	return false
}

func groupDisruption(g changeplan.NodeGroup) string {
	switch {
	case g.Adopting:
		return "adopting"
	case g.Plan == nil:
		return "error"
	}
	return g.Plan.Disruption
}

// adoptionDisruption is an adoption's column in the table: what approving it does.
func adoptionDisruption(a changeplan.Adoption) string {
	d := "none"
	switch {
	case len(a.Plan.Refused) > 0:
		return "refused"
	case a.Plan.Drain && a.Plan.Reboot:
		d = "drain+reboot"
	case a.Plan.Reboot:
		d = "reboot"
	case a.Plan.Drain:
		d = "drain"
	case a.Plan.Actions != "" && a.Plan.Actions != "None":
		d = strings.ToLower(a.Plan.Actions)
	}
	if !a.Approved {
		d += " (awaiting approval)"
	}
	return d
}

// printAdoption writes the plan a node's agent published for adopting it, whole: each file with
// its diff (or why none is shown), the units, the OS fields, the disruption.
func printAdoption(w io.Writer, a changeplan.Adoption) {
	approval := fmt.Sprintf("awaiting approval (`mco adopt %s`)", a.Node)
	if a.Approved {
		approval = "approved"
	}
	fmt.Fprintf(w, "\n--- adoption of %s, %s: %s\n", a.Node, approval, a.Plan.Summary())
	if a.Note != "" {
		fmt.Fprintf(w, "note: %s\n", a.Note)
	}
	if a.PlanError != "" {
		fmt.Fprintf(w, "error: the agent's plan cannot be read: %s\n", a.PlanError)
	}
	p := a.Plan
	fmt.Fprintf(w, "Actions: %s; drain: %s; reboot: %s\n", orNone(p.Actions), yesNo(p.Drain), yesNo(p.Reboot))
	for _, f := range p.Files {
		fmt.Fprintf(w, "\nFile %s (%s)", f.Path, f.Change)
		if f.Note != "" {
			fmt.Fprintf(w, ": %s", f.Note)
		}
		fmt.Fprintln(w)
		if f.Diff != "" {
			fmt.Fprintln(w, f.Diff)
		}
	}
	for _, u := range p.Units {
		fmt.Fprintf(w, "\nUnit %s: %s\n", u.Name, u.Change)
	}
	if len(p.OS) > 0 {
		fmt.Fprintf(w, "\nThe booted system changes: %s\n", strings.Join(p.OS, ", "))
	}
	if p.Password {
		fmt.Fprintln(w, "\nThe core user's password changes.")
	}
	if len(p.Refused) > 0 {
		fmt.Fprintln(w, "\nRefused (this host cannot apply it; approving does not help):")
		for _, r := range p.Refused {
			fmt.Fprintf(w, "  %s\n", r)
		}
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
