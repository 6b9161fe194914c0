package planview

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/problems"
)

// WriteReport writes a live plan: one line per group, then each group's plan. set holds the
// manifests applied (nil for none): a warning about one of them is placed in its file, as
// `mco validate` places it.
func WriteReport(w io.Writer, r *changeplan.Report, set *manifest.Set) error {
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
				fmt.Fprintln(w, problems.WarningLine(set, warning))
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
			if err := writeDetails(w, g.Plan); err != nil {
				return err
			}
		}
		for _, a := range p.Adoptions {
			writeAdoption(w, a)
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
