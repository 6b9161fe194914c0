package statusview

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
)

// WriteTables prints the pools table, then the nodes table.
func WriteTables(w io.Writer, pools []PoolRow, nodes []NodeRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POOL\tTARGET\tUPDATED\tREADY\tUNAVAILABLE\tDEGRADED\tPACING\tCONDITIONS")
	for _, p := range pools {
		conditions := strings.Join(p.Conditions, "; ")
		if p.Paused {
			conditions = strings.TrimPrefix(conditions+"; Paused", "; ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%d\t%d\t%s\t%s\n", p.Name, orDash(p.Target), p.Updated, p.Machines, p.Ready, p.Unavailable, p.Degraded, orDash(p.Pacing), orDash(conditions))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "NODE\tPOOL\tCURRENT\tDESIRED\tSTATE\tPHASE\tREASON")
	for _, n := range nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, orDash(n.Pool), orDash(n.Current), orDash(n.Desired), orDash(n.State), orDash(n.PhaseColumn()), orDash(n.Reason))
	}
	return tw.Flush()
}

// RolloutFrame is one screen of `mco rollout status`: the pool's pacing (Pacing.Lines, at now),
// a progress bar for the pool and a line per node that is not simply waiting or done.
func RolloutFrame(pool *mcfgv1.MachineConfigPool, nodes []NodeRow, pacing Pacing, now time.Time) string {
	var b strings.Builder
	total, done := 0, 0
	for _, n := range nodes {
		// Nodes the pool does not count yet (joining, waiting for adoption) are listed below,
		// not counted: the bar agrees with the pool's own counts.
		if n.Pool != pool.Name || n.Phase == PhaseJoining || n.Phase == PhaseAdoption {
			continue
		}
		total++
		if n.Phase == PhaseDone {
			done++
		}
	}
	fmt.Fprintf(&b, "pool %s -> %s\n", pool.Name, orDash(pool.Spec.Configuration.Name))
	if line := RolledBack(pool); line != "" {
		b.WriteString(line + "\n")
	}
	for _, line := range pacing.Lines(now) {
		b.WriteString(line + "\n")
	}
	fmt.Fprintf(&b, "%s %d/%d nodes updated\n", bar(done, total, 30), done, total)
	for _, n := range nodes {
		if n.Pool != pool.Name || n.Phase == PhaseDone || n.Phase == PhaseWaiting {
			continue
		}
		line := fmt.Sprintf("  %-24s %s", n.Name, n.Phase)
		if n.Reason != "" {
			line += ": " + n.Reason
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

func bar(done, total, width int) string {
	filled := 0
	if total > 0 {
		filled = done * width / total
	}
	return "[" + strings.Repeat("#", filled) + strings.Repeat("-", width-filled) + "]"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
