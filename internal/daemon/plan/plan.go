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
	// Rule is the matching policy (`file policy /etc/containers`) or why none applies.
	Rule    string
	Actions []Action
}

// Plan is the ordered list of post-write actions plus how each change contributed.
type Plan struct {
	Actions []Action
	Causes  []Cause
}

// NeedsReboot reports whether the node reboots after writing.
func (p Plan) NeedsReboot() bool { return p.has(Reboot) }

// NeedsDrain reports whether the node must be cordoned and drained before writing.
func (p Plan) NeedsDrain() bool { return p.has(Reboot) || p.has(Drain) }

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
//   - each changed file → the policy of that path or its longest directory prefix;
//   - each changed unit → the policy of exactly that name;
//   - SSH key or password changes → the sshkey policy;
//   - anything without a policy → Reboot.
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
			causes = append(causes, Cause{Change: "file " + path, Rule: "file policy " + fp.Path, Actions: fp.Actions})
		} else {
			causes = append(causes, Cause{Change: "file " + path, Rule: "no file policy matches", Actions: []Action{{Type: Reboot}}})
		}
	}
	for _, name := range d.Units {
		if up, ok := p.unitPolicy(name); ok {
			causes = append(causes, Cause{Change: "unit " + name, Rule: "unit policy " + up.Name, Actions: up.Actions})
		} else {
			causes = append(causes, Cause{Change: "unit " + name, Rule: "no unit policy matches", Actions: []Action{{Type: Reboot}}})
		}
	}
	if d.SSHKeys || d.Password {
		causes = append(causes, Cause{Change: "core SSH keys or password", Rule: "sshkey policy", Actions: p.SSHKey})
	}
	return Plan{Actions: combine(causes), Causes: causes}
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
