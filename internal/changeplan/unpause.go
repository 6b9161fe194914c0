package changeplan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Group is the nodes of a paused pool that run one rendered config, with the plan of moving
// them to the pool's target.
type Group struct {
	// Current is the rendered config the nodes run.
	Current string
	Nodes   int
	// Plan is nil when Err says why the move could not be planned (e.g. a missing config).
	Plan *Plan
	Err  string
}

// Verdict is what unpausing a pool would do, condensed into one condition's reason and message.
type Verdict struct {
	Reason  string
	Message string
}

// Reasons of a Verdict, from the worst outcome down; the worst of any group is the reason.
const (
	ReasonRefused        = "Refused"
	ReasonDrainAndReboot = "DrainAndReboot"
	ReasonDrain          = "Drain"
	ReasonNotPlanned     = "NotPlanned"
	ReasonNoDisruption   = "NoDisruption"
)

// A condition message is read in `kubectl describe` and `mco status`: a pool of 500 nodes with
// 300 changed files must still say it in a line or two. Each outcome names at most
// maxNamedCauses causes, each cut at maxCauseRunes.
const (
	maxNamedCauses = 3
	maxCauseRunes  = 80
)

// outcome is one class of groups: the nodes that share it and the causes, in first-seen order.
type outcome struct {
	reason string
	nodes  int
	causes []string
}

// Unpausing condenses the plans of a paused pool's groups: per outcome (refused, reboot, drain,
// not planned, no drain or reboot) the number of nodes and the first few causes, worst first,
// e.g. "unpausing reboots 12 nodes: kernel argument audit=1, file /etc/motd; changes nothing on
// 3 nodes that needs a drain or reboot: restart crio.service". Groups are read largest first,
// so the causes named are those of most nodes. No groups is no verdict (Reason "").
func Unpausing(groups []Group) Verdict {
	sorted := slices.Clone(groups)
	slices.SortStableFunc(sorted, func(a, b Group) int {
		return cmp.Or(cmp.Compare(b.Nodes, a.Nodes), cmp.Compare(a.Current, b.Current))
	})
	order := []string{ReasonRefused, ReasonDrainAndReboot, ReasonDrain, ReasonNotPlanned, ReasonNoDisruption}
	outcomes := make(map[string]*outcome, len(order))
	for _, r := range order {
		outcomes[r] = &outcome{reason: r}
	}
	for _, g := range sorted {
		reason, causes := classify(g)
		o := outcomes[reason]
		o.nodes += g.Nodes
		for _, c := range causes {
			if !slices.Contains(o.causes, c) {
				o.causes = append(o.causes, c)
			}
		}
	}
	var v Verdict
	var parts []string
	for _, r := range order {
		o := outcomes[r]
		if o.nodes == 0 {
			continue
		}
		if v.Reason == "" {
			v.Reason = r
		}
		parts = append(parts, phrase(o))
	}
	if len(parts) > 0 {
		v.Message = "unpausing " + strings.Join(parts, "; ")
	}
	return v
}

// classify names a group's outcome and the causes to show for it.
func classify(g Group) (string, []string) {
	p := g.Plan
	switch {
	case p == nil:
		return ReasonNotPlanned, []string{orUnknown(g.Err)}
	case len(p.Refusals()) > 0:
		return ReasonRefused, p.Refusals()
	case p.Reboot:
		return ReasonDrainAndReboot, p.causesOf("Reboot")
	case p.Drain:
		return ReasonDrain, p.causesOf("Drain")
	}
	return ReasonNoDisruption, liveActions(p.Actions)
}

// causesOf names the changes whose actions include the action type, kernel arguments one by one.
func (p *Plan) causesOf(action string) []string {
	var out []string
	for _, c := range p.Causes {
		if !slices.ContainsFunc(c.Actions, func(a string) bool { return a == action }) {
			continue
		}
		if c.Change == "kernelArguments" && p.KernelArguments != nil {
			for _, a := range p.KernelArguments.Added {
				out = append(out, "kernel argument "+a)
			}
			for _, a := range p.KernelArguments.Removed {
				out = append(out, "kernel argument "+a+" removed")
			}
			continue
		}
		out = append(out, c.Change)
	}
	return out
}

// liveActions words the actions of a plan without drain or reboot as systemctl would.
func liveActions(actions []string) []string {
	out := make([]string, 0, len(actions))
	for _, a := range actions {
		verb, unit, _ := strings.Cut(a, " ")
		switch verb {
		case "None":
			out = append(out, "no further action")
		case "DaemonReload":
			out = append(out, "daemon-reload")
		default:
			out = append(out, strings.TrimSpace(strings.ToLower(verb)+" "+unit))
		}
	}
	return out
}

func phrase(o *outcome) string {
	nodes := count(o.nodes, "node")
	causes := namedCauses(o.causes)
	switch o.reason {
	case ReasonRefused:
		return fmt.Sprintf("is refused for %s: %s", nodes, causes)
	case ReasonDrainAndReboot:
		return fmt.Sprintf("reboots %s: %s", nodes, causes)
	case ReasonDrain:
		return fmt.Sprintf("drains %s: %s", nodes, causes)
	case ReasonNotPlanned:
		return fmt.Sprintf("cannot be planned for %s: %s", nodes, causes)
	}
	return fmt.Sprintf("changes nothing on %s that needs a drain or reboot: %s", nodes, causes)
}

// namedCauses joins the first maxNamedCauses causes, each cut to maxCauseRunes, and counts the rest.
func namedCauses(causes []string) string {
	if len(causes) == 0 {
		return "no cause recorded"
	}
	shown := make([]string, 0, maxNamedCauses+1)
	for _, c := range causes[:min(len(causes), maxNamedCauses)] {
		shown = append(shown, truncate(c, maxCauseRunes))
	}
	if extra := len(causes) - maxNamedCauses; extra > 0 {
		shown = append(shown, fmt.Sprintf("and %d more", extra))
	}
	return strings.Join(shown, ", ")
}

// truncate also folds whitespace: an unreconcilable reason may span lines.
func truncate(s string, runes int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= runes {
		return s
	}
	return string([]rune(s)[:runes-1]) + "…"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown error"
	}
	return s
}
