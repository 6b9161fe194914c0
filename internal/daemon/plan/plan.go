package plan

import (
	"fmt"
	"slices"
	"strings"
)

// ActionType is what the node does after writing a config. The values are OpenShift's
// NodeDisruptionPolicy action types.
type ActionType string

const (
	None         ActionType = "None"
	Reload       ActionType = "Reload"
	Restart      ActionType = "Restart"
	DaemonReload ActionType = "DaemonReload"
	Drain        ActionType = "Drain"
	Reboot       ActionType = "Reboot"
	// Special is OpenShift's status-only action of the default registries.conf policy: reload
	// crio, and drain unless RegistriesConfDrain finds the change safe. Compute resolves it, so
	// a plan's actions never contain it.
	Special ActionType = "Special"
)

// Action is one step; Unit is set for Reload and Restart.
type Action struct {
	Type ActionType
	Unit string
}

func (a Action) String() string {
	if a.Unit != "" {
		return fmt.Sprintf("%s %s", a.Type, a.Unit)
	}
	return string(a.Type)
}

// Cause explains why a change led to the actions it did, for `mco plan` and events.
type Cause struct {
	// Change is e.g. `file /etc/chrony.conf`, `unit kubelet.service`, `kernelArguments`.
	Change string
	// Rule is the matching policy (`file policy /etc/containers`) or why none applies, and
	// for the Special action whether it drains and why.
	Rule    string
	Actions []Action
	// DrainSkipped is set where the Special action found the change safe without a drain.
	DrainSkipped bool
}

// Plan is the ordered list of post-write actions plus how each change contributed.
type Plan struct {
	Actions []Action
	Causes  []Cause
	// Refused says why the node must not take the update at all: it is refused before any
	// drain or write, and Actions are never carried out.
	Refused []string
}

// NeedsReboot reports whether the node reboots after writing.
func (p Plan) NeedsReboot() bool { return p.has(Reboot) }

// NeedsDrain reports whether the node must be cordoned and drained before writing.
func (p Plan) NeedsDrain() bool { return p.has(Reboot) || p.has(Drain) }

// DrainReason explains the drain decision for logs: the first change that drains, or for a
// plan without a drain, the first whose drain the Special action skipped; "" otherwise.
func (p Plan) DrainReason() string {
	drains := func(c Cause) bool {
		return slices.ContainsFunc(c.Actions, func(a Action) bool { return a.Type == Drain || a.Type == Reboot })
	}
	if !p.NeedsDrain() {
		drains = func(c Cause) bool { return c.DrainSkipped }
	}
	for _, c := range p.Causes {
		if drains(c) {
			return c.Change + ": " + c.Rule
		}
	}
	return ""
}

func (p Plan) has(t ActionType) bool {
	return slices.ContainsFunc(p.Actions, func(a Action) bool { return a.Type == t })
}

func (p Plan) String() string {
	parts := make([]string, len(p.Actions))
	for i, a := range p.Actions {
		parts[i] = a.String()
	}
	return strings.Join(parts, ", ")
}

// Compute turns a diff into actions:
//   - OS image, kernel arguments, extensions, kernel type, FIPS, a forced rewrite or a reboot
//     still pending from the current config → Reboot;
//   - each changed file → the policy of that path or its longest directory prefix; the
//     Special action (registries.conf's default) becomes Reload crio.service, after a Drain
//     unless RegistriesConfDrain finds the change safe;
//   - each changed unit → the policy of exactly that name;
//   - SSH key or password changes, or any other change to passwd → the sshkey policy;
//   - anything without a policy → Reboot.
//
// A changed registries.conf that containers/image cannot read refuses the plan (Refused),
// whatever the policy: crio reads it on every pull, so written it would break the node's pulls.
//
// Any Reboot makes the plan just [Reboot]; None is dropped when anything else is planned; a
// plan with nothing to do is [None]. Unlike OpenShift, repeated actions are kept once, and
// DaemonReload runs before any reload or restart so they see the new unit files.
func Compute(d Diff, p Policies) Plan {
	var causes []Cause
	for _, change := range d.rebootChanges() {
		causes = append(causes, Cause{Change: change, Rule: "always needs a reboot", Actions: []Action{{Type: Reboot}}})
	}
	for _, path := range d.Files {
		if fp, ok := p.filePolicy(path); ok {
			c := Cause{Change: "file " + path, Rule: "file policy " + fp.Path, Actions: fp.Actions}
			if slices.ContainsFunc(c.Actions, func(a Action) bool { return a.Type == Special }) {
				c = resolveSpecial(c, path, d.RegistriesConf)
			}
			causes = append(causes, c)
		} else {
			rule := "no file policy matches"
			if inert := p.coversNothing(); len(inert) > 0 {
				rule += fmt.Sprintf(" (file policy paths %s cover no file, as in OpenShift)", strings.Join(inert, ", "))
			}
			causes = append(causes, Cause{Change: "file " + path, Rule: rule, Actions: []Action{{Type: Reboot}}})
		}
	}
	for _, name := range d.Units {
		if up, ok := p.unitPolicy(name); ok {
			causes = append(causes, Cause{Change: "unit " + name, Rule: "unit policy " + up.Name, Actions: up.Actions})
		} else {
			causes = append(causes, Cause{Change: "unit " + name, Rule: "no unit policy matches", Actions: []Action{{Type: Reboot}}})
		}
	}
	switch {
	case d.SSHKeys || d.Password:
		causes = append(causes, Cause{Change: "core SSH keys or password", Rule: "sshkey policy", Actions: p.SSHKey})
	case d.Passwd:
		causes = append(causes, Cause{Change: "passwd users", Rule: "sshkey policy (OpenShift's, for any change to passwd)", Actions: p.SSHKey})
	}
	return Plan{Actions: combine(causes), Causes: causes, Refused: d.refusals()}
}

// refusals: a changed registries.conf must be readable by containers/image. OpenShift checks
// the same (decoding both files before it writes, for the Special action); it fails the update
// only where Special decides the drain, mco wherever the file changes.
func (d Diff) refusals() []string {
	c := d.RegistriesConf
	switch {
	case c == nil:
		return nil
	case c.NewUnreadable != "":
		return []string{c.NewUnreadable}
	}
	if err := readableRegistriesConf(c.New); err != nil {
		return []string{fmt.Sprintf("the new config's %s cannot be read by containers/image, so crio could pull no image: %v", RegistriesConfPath, err)}
	}
	return nil
}

// resolveSpecial turns each Special into a crio reload, preceded by a drain unless the
// registries.conf change is safe, and says which in the rule.
func resolveSpecial(c Cause, path string, contents *Contents) Cause {
	drain, why := true, ""
	switch {
	case path != RegistriesConfPath:
		why = "Special is meant for " + RegistriesConfPath + " only"
	case contents == nil:
		why = "the file's contents are not known"
	case contents.NewUnreadable != "":
		why = contents.NewUnreadable
	case contents.OldUnreadable != "":
		// OpenShift fails such an update; replacing a file crio cannot read is a repair.
		why = contents.OldUnreadable
	default:
		drain, why = RegistriesConfDrain(contents.Old, contents.New)
	}
	var actions []Action
	if drain {
		actions = append(actions, Action{Type: Drain})
	}
	for _, a := range c.Actions {
		if a.Type == Special {
			a = reload("crio.service")
		}
		actions = append(actions, a)
	}
	c.Actions, c.DrainSkipped = actions, !drain
	if drain {
		c.Rule = fmt.Sprintf("%s (Special: drain, %s)", c.Rule, why)
	} else {
		c.Rule = fmt.Sprintf("%s (Special: no drain, %s)", c.Rule, why)
	}
	return c
}

func (d Diff) rebootChanges() []string {
	changes := d.OSChanges()
	if d.FIPS {
		changes = append(changes, "fips")
	}
	if d.Force {
		changes = append(changes, "forced rewrite")
	}
	if d.RebootPending {
		changes = append(changes, "the current config's reboot, still pending")
	}
	return changes
}

func combine(causes []Cause) []Action {
	var all []Action
	for _, c := range causes {
		all = append(all, c.Actions...)
	}
	if slices.ContainsFunc(all, func(a Action) bool { return a.Type == Reboot }) {
		return []Action{{Type: Reboot}}
	}
	var out []Action
	for _, a := range all {
		if a.Type == None || slices.Contains(out, a) {
			continue
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return []Action{{Type: None}}
	}
	// Stable: drain first (it happens before writing), then daemon-reload, then the rest in order.
	rank := func(a Action) int {
		switch a.Type {
		case Drain:
			return 0
		case DaemonReload:
			return 1
		}
		return 2
	}
	slices.SortStableFunc(out, func(a, b Action) int { return rank(a) - rank(b) })
	return out
}
