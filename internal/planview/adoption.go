package planview

import (
	"fmt"
	"io"
	"strings"

	"github.com/mco-dev/mco/internal/changeplan"
)

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

// writeAdoption writes the plan a node's agent published for adopting it, whole: each file with
// its diff (or why none is shown), the units, the OS fields, the disruption.
func writeAdoption(w io.Writer, a changeplan.Adoption) {
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
