package planview

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mco-dev/mco/internal/changeplan"
)

// WritePlan writes an offline plan: a table of the verdict, then causes and diffs.
func WritePlan(w io.Writer, p *changeplan.Plan) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "POOL\tCURRENT\tRENDERED\tDISRUPTION\n")
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Pool, p.Current, p.Rendered, p.Disruption)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s\n", p.Summary)
	return writeDetails(w, p)
}

// writeDetails writes what follows a plan's verdict: causes, kernel arguments, fields and diffs.
func writeDetails(w io.Writer, p *changeplan.Plan) error {
	if len(p.Causes) > 0 {
		fmt.Fprintln(w, "\nWhy:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  CHANGE\tACTIONS\tRULE\n")
		for _, c := range p.Causes {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Change, strings.Join(c.Actions, ", "), c.Rule)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if k := p.KernelArguments; k != nil {
		fmt.Fprintln(w, "\nKernel arguments:")
		for _, a := range k.Added {
			fmt.Fprintf(w, "  + %s\n", a)
		}
		for _, a := range k.Removed {
			fmt.Fprintf(w, "  - %s\n", a)
		}
	}
	for _, fc := range p.Fields {
		fmt.Fprintf(w, "\n%s: %q → %q\n", fc.Field, fc.Old, fc.New)
	}
	if p.SSHKeysChanged {
		fmt.Fprintln(w, "\nSSH keys of the core user change.")
	}
	if p.PasswordChanged {
		fmt.Fprintln(w, "\nThe core user's password changes.")
	}
	if p.UsersChanged {
		fmt.Fprintln(w, "\nThe config's users change (not core's SSH keys or password).")
	}
	for _, group := range []struct {
		title   string
		changes []changeplan.Change
	}{{"Unit", p.Units}, {"File", p.Files}} {
		for _, c := range group.changes {
			fmt.Fprintf(w, "\n%s %s (%s)", group.title, c.Name, c.Kind)
			if c.Hashed != "" {
				fmt.Fprintf(w, ", contents hashed (%s): sha256 %s → %s", c.Hashed, orNone(c.OldSHA256), orNone(c.NewSHA256))
			}
			if c.Unreadable != "" {
				fmt.Fprintf(w, ", unreadable: %s", c.Unreadable)
			}
			fmt.Fprintf(w, "\n%s", c.Diff)
		}
	}
	if len(p.Unreconcilable) > 0 {
		fmt.Fprintln(w, "\nUnreconcilable (the controller refuses to render this over the current config):")
		for _, u := range p.Unreconcilable {
			fmt.Fprintf(w, "  %s\n", u)
		}
	}
	if len(p.Refused) > 0 {
		fmt.Fprintln(w, "\nRefused (the agent refuses the update before any drain or write):")
		for _, r := range p.Refused {
			fmt.Fprintf(w, "  %s\n", r)
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
