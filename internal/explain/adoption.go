package explain

import (
	"fmt"
	"strings"

	"github.com/mco-dev/mco/internal/adoption"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// Bounds of an adoption plan in an explanation: `mco plan` shows it whole.
const (
	maxAdoptionFiles     = 5
	maxAdoptionDiffLines = 12
)

// unmanaged explains a node of a pool that mco does not manage yet: joining (a node mco
// booted whose agent has not reported), offered its pool's config, or waiting for adoption
// (a node mco did not boot whose agent found that adopting it changes the host).
func (e nodeExplainer) unmanaged(x *Explanation) {
	in := "mcp/" + e.pool.Name
	target := e.pool.Spec.Configuration.Name
	offer := e.annotation(protocol.AdoptionTargetAnnotation)
	checkAgent := fmt.Sprintf("check the node's agent: `journalctl -u mco-daemon` on it, or its pod (`kubectl -n openshift-machine-config-operator get pods -l app.kubernetes.io/component=daemon --field-selector spec.nodeName=%s`)", e.n.Name)
	a, awaiting := rollout.AwaitingAdoption(e.n, e.pool)
	switch {
	case target == "" || (offer == "" && !awaiting):
		x.Summary = fmt.Sprintf("joining %s: the agent has not reported yet", in)
		x.Doing = "waiting for the node's agent to report the config the node runs (annotation currentConfig)"
		x.Next = "the pool counts and updates the node once its agent reports"
		if target != "" {
			x.Next = fmt.Sprintf("the node controller offers it %s (annotation adoption-target); a node mco booted is counted once its agent reports, one it did not boot is compared with %s by its agent", target, target)
		}
		x.YouCan = []string{checkAgent}
	case !awaiting:
		x.Summary = fmt.Sprintf("offered %s in %s: its agent has not compared the host yet", offer, in)
		x.Doing = fmt.Sprintf("waiting for the node's agent to compare the host with %s (annotation adoption-target)", offer)
		if offer != target {
			x.Doing = fmt.Sprintf("waiting for the node controller to offer %s, the pool's target (the node still has %s)", target, offer)
		} else if e.annotation(protocol.AdoptionAnnotation) == protocol.AdoptionPending {
			x.Doing = fmt.Sprintf("waiting for the node's agent to compare the host with %s: its published plan is for another config", offer)
		}
		x.Next = "a host that already matches is adopted as it is (no drain, reboot or change); otherwise the agent publishes what adopting would do and the node waits for approval"
		x.YouCan = []string{checkAgent}
	case a.Refused:
		x.Summary = fmt.Sprintf("cannot be adopted into %s in %s", target, in)
		x.Doing = "nothing: the node's agent found that this host cannot apply " + target
		x.Why = append([]string{}, a.Plan.Refused...)
		x.Next = "nothing: approving does not help; the agent compares the host again when the pool's target changes, and every few minutes"
		x.YouCan = []string{"change the pool's MachineConfigs (or the host) so the host can apply them", fmt.Sprintf("`mco plan --pool %s` shows the whole plan", e.pool.Name)}
	default:
		x.Summary = fmt.Sprintf("waiting for adoption into %s in %s: %s", target, in, a.Plan.Summary())
		x.Doing = fmt.Sprintf("nothing: mco did not boot this node; its agent compared the host with %s and waits for your approval before changing anything", target)
		x.Why = adoptionWhy(a)
		x.Next = "once approved, the node controller gives it " + target + " within the pool's maxUnavailable (the node counts in the pool from then on); its agent then updates it as planned" + disruption(a.Plan) +
			", keeping each file it overwrites, and reports Done. `mco daemon revert` on the node returns it to the host's own files"
		if a.Approved {
			x.Summary = fmt.Sprintf("adoption into %s approved, waiting for room in %s", target, in)
			x.Doing = "waiting: the adoption is approved; the node controller starts it when the pool has room"
			for _, h := range holds(e.c, e.pool) {
				x.Why = append(x.Why, h.Why)
				x.YouCan = append(x.YouCan, h.YouCan...)
			}
			x.Why = append(x.Why, "maxUnavailable bounds adoptions as it bounds updates: the node starts when fewer than maxUnavailable of the pool's nodes are unavailable")
			if !rollout.Ready(e.n) {
				x.Why = append(x.Why, "the node is not Ready (or is cordoned): it is adopted only once Ready")
			}
			return
		}
		x.YouCan = []string{
			fmt.Sprintf("approve this node: `mco adopt %s`", e.n.Name),
			fmt.Sprintf("approve every node of the pool: `mco adopt --pool %s`", e.pool.Name),
			fmt.Sprintf("`mco plan --pool %s` shows each file's whole diff", e.pool.Name),
			"or bring the host's files in line with the config by hand: the agent compares again every few minutes and adopts a matching host without any change",
		}
	}
}

// adoptionWhy lists what adopting would write (files with their diffs, bounded), units, OS
// fields and the password.
func adoptionWhy(a rollout.Awaiting) []string {
	var why []string
	if a.PlanError != "" {
		why = append(why, "the agent's plan cannot be read: "+a.PlanError)
	}
	p := a.Plan
	for i, f := range p.Files {
		if i == maxAdoptionFiles {
			why = append(why, fmt.Sprintf("and %d more files", len(p.Files)-maxAdoptionFiles))
			break
		}
		line := fmt.Sprintf("writes %s (%s)", f.Path, f.Change)
		switch {
		case f.Diff != "":
			line += ":\n" + indentedDiff(f.Diff)
		case f.Note != "":
			line += ": " + f.Note
		}
		why = append(why, line)
	}
	for _, u := range p.Units {
		why = append(why, fmt.Sprintf("unit %s: %s", u.Name, u.Change))
	}
	if len(p.OS) > 0 {
		why = append(why, "changes the booted system's "+strings.Join(p.OS, ", "))
	}
	if p.Password {
		why = append(why, "sets core's password")
	}
	return why
}

// indentedDiff keeps the first lines of a diff, indented under its bullet.
func indentedDiff(diff string) string {
	lines := strings.Split(diff, "\n")
	if extra := len(lines) - maxAdoptionDiffLines; extra > 0 {
		lines = append(lines[:maxAdoptionDiffLines], fmt.Sprintf("... %d more lines (`mco plan --pool` shows them)", extra))
	}
	return "      " + strings.Join(lines, "\n      ")
}

// disruption says what adopting does to the node's workloads.
func disruption(p adoption.Plan) string {
	switch {
	case p.Drain && p.Reboot:
		return " (drain, write, reboot)"
	case p.Reboot:
		return " (write, reboot)"
	case p.Drain:
		return fmt.Sprintf(" (drain, write, %s)", strings.ToLower(p.Actions))
	case p.Actions != "" && p.Actions != "None":
		return fmt.Sprintf(" (write, %s)", strings.ToLower(p.Actions))
	}
	return " (write; no drain, restart or reboot)"
}
