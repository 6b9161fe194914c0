package changeplan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/plan"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/render"
)

// Input is one pool's change: what nodes run now and the MachineConfigs after the change.
type Input struct {
	Pool *mcfgv1.MachineConfigPool
	// Current is the rendered config the pool's nodes run.
	Current *mcfgv1.MachineConfig
	// MachineConfigs are all MachineConfigs as they would be after the change; the pool selects.
	MachineConfigs []*mcfgv1.MachineConfig
	// Policies is what MachineConfiguration cluster says (plan.PoliciesOf): the
	// NodeDisruptionPolicy in effect and the irreconcilable changes it allows.
	Policies plan.Policies
	// Render is passed to render.Render; its Current is ignored (unreconcilable changes are
	// listed in the plan instead of failing it).
	Render render.Options
}

// Plan is what the change does to a node of the pool running Input.Current.
type Plan struct {
	Pool    string `json:"pool"`
	Current string `json:"current"`
	// Rendered is the new rendered config's name; equal to Current when nothing changes.
	Rendered string   `json:"rendered"`
	Sources  []string `json:"sources"`
	Summary  string   `json:"summary"`
	// Disruption is the one-line verdict: none, reload X, restart X, drain, drain+reboot, or
	// refused when the controller would not render the change (Unreconcilable) or the agent
	// would not apply it (Refused).
	Disruption string   `json:"disruption"`
	Drain      bool     `json:"drain"`
	Reboot     bool     `json:"reboot"`
	Actions    []string `json:"actions"`
	// Causes say, change by change, which policy rule gave which actions.
	Causes          []Cause          `json:"causes,omitempty"`
	KernelArguments *KernelArguments `json:"kernelArguments,omitempty"`
	Fields          []FieldChange    `json:"fields,omitempty"`
	SSHKeysChanged  bool             `json:"sshKeysChanged,omitempty"`
	PasswordChanged bool             `json:"passwordChanged,omitempty"`
	// UsersChanged is another change to passwd (another user's entry): no file or key moves, but
	// the sshkey policy applies, as in OpenShift.
	UsersChanged bool     `json:"usersChanged,omitempty"`
	Units        []Change `json:"units,omitempty"`
	Files        []Change `json:"files,omitempty"`
	// Unreconcilable lists what the controller refuses to render over Current, so the change
	// would leave the pool degraded instead of updating nodes.
	Unreconcilable []string `json:"unreconcilable,omitempty"`
	// Refused lists why the agent refuses the move before any drain or write (a new
	// registries.conf containers/image cannot read): the controller renders the change, but the
	// first node given it reports Degraded instead of moving.
	Refused []string `json:"refused,omitempty"`
	// Warnings are what Ignition only warns about in the sources (keys it ignores or reads in
	// another case): the render, and so this plan, is as OpenShift's.
	Warnings []render.Warning `json:"warnings,omitempty"`
}

// Disrupts reports whether a node would be drained or rebooted.
func (p *Plan) Disrupts() bool { return p.Drain || p.Reboot }

// Refusals are every reason the change would not reach a node: unreconcilable, or refused by
// the agent.
func (p *Plan) Refusals() []string { return slices.Concat(p.Unreconcilable, p.Refused) }

// ExitCode is what `mco plan --offline` exits with: 2 when the change is unreconcilable or
// refused by the agent, 1 when a node would be drained or rebooted, 0 otherwise.
func (p *Plan) ExitCode() int {
	switch {
	case len(p.Refusals()) > 0:
		return 2
	case p.Disrupts():
		return 1
	}
	return 0
}

// Why says in one line what made ExitCode non-zero.
func (p *Plan) Why() string {
	switch {
	case len(p.Unreconcilable) > 0:
		return fmt.Sprintf("pool %s: the controller would refuse this change: %s", p.Pool, strings.Join(p.Unreconcilable, "; "))
	case len(p.Refused) > 0:
		return fmt.Sprintf("pool %s: nodes would refuse this change: %s", p.Pool, strings.Join(p.Refused, "; "))
	case p.Disrupts():
		return fmt.Sprintf("pool %s: nodes would be %s", p.Pool, map[bool]string{true: "drained and rebooted", false: "drained"}[p.Reboot])
	}
	return ""
}

// Cause is plan.Cause with its actions as words.
type Cause struct {
	Change  string   `json:"change"`
	Rule    string   `json:"rule"`
	Actions []string `json:"actions"`
}

// KernelArguments lists spec.kernelArguments entries the change adds and removes.
type KernelArguments struct {
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// FieldChange is a spec field other than the Ignition config: osImageURL, kernelType, ...
type FieldChange struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// Change is a file or unit added, removed or changed, with a unified diff of its text, or for
// secret and binary files the sha256 of each side instead.
type Change struct {
	Name string `json:"name"`
	// Kind is added, removed or changed.
	Kind      string `json:"kind"`
	Diff      string `json:"diff,omitempty"`
	Hashed    string `json:"hashed,omitempty"` // why contents are hashed: secret or binary
	OldSHA256 string `json:"oldSHA256,omitempty"`
	NewSHA256 string `json:"newSHA256,omitempty"`
	// Unreadable says why the contents could not be decoded (e.g. a remote source).
	Unreadable string `json:"unreadable,omitempty"`
}

// Compute renders the pool from in.MachineConfigs and compares the result with in.Current the
// way the node agent will.
func Compute(in Input) (*Plan, error) {
	if in.Pool == nil || in.Current == nil {
		return nil, fmt.Errorf("changeplan: a pool and its current rendered config are needed")
	}
	opts := in.Render
	opts.Current = nil
	res, err := render.Render(in.Pool, in.MachineConfigs, opts)
	if err != nil {
		return nil, err
	}
	p, err := compare(in.Pool.Name, in.Current, res.Config, res.Ignition, in.Policies)
	if err != nil {
		return nil, err
	}
	for _, src := range res.Sources {
		p.Sources = append(p.Sources, src.Name)
	}
	p.Warnings = res.Warnings
	p.Summary = summary(p)
	return p, nil
}

// Between plans a node of pool moving from one rendered config to another, both already
// rendered (e.g. a paused pool's status.configuration and spec.configuration).
func Between(pool string, current, next *mcfgv1.MachineConfig, policies plan.Policies) (*Plan, error) {
	if current == nil || next == nil {
		return nil, fmt.Errorf("changeplan: both rendered configs are needed")
	}
	newIgn, err := ignition.Parse(next.Spec.Config.Raw)
	if err != nil {
		return nil, fmt.Errorf("rendered config %s: spec.config: %w", next.Name, err)
	}
	p, err := compare(pool, current, next, newIgn, policies)
	if err != nil {
		return nil, err
	}
	p.Summary = summary(p)
	return p, nil
}

func compare(pool string, current, next *mcfgv1.MachineConfig, newIgn ignition.Config, policies plan.Policies) (*Plan, error) {
	oldIgn, err := ignition.Parse(current.Spec.Config.Raw)
	if err != nil {
		return nil, fmt.Errorf("current rendered config %s: spec.config: %w", current.Name, err)
	}
	diff := plan.DiffParsed(current.Spec, next.Spec, oldIgn, newIgn)
	agent := plan.Compute(diff, policies)

	out := &Plan{
		Pool:     pool,
		Current:  current.Name,
		Rendered: next.Name,
		Drain:    agent.NeedsDrain(),
		Reboot:   agent.NeedsReboot(),
	}
	for _, a := range agent.Actions {
		out.Actions = append(out.Actions, a.String())
	}
	for _, c := range agent.Causes {
		out.Causes = append(out.Causes, Cause{Change: c.Change, Rule: c.Rule, Actions: actionWords(c.Actions)})
	}
	if diff.KernelArguments {
		// One argument per element, as the agent stages them: an entry may hold several.
		staged := osimage.ChangeBetween(current.Spec, next.Spec)
		out.KernelArguments = kernelArguments(staged.OldKernelArgs, staged.NewKernelArgs)
	}
	out.Fields = fieldChanges(current.Spec, next.Spec, diff)
	out.SSHKeysChanged, out.PasswordChanged = diff.SSHKeys, diff.Password
	out.UsersChanged = diff.Passwd && !diff.SSHKeys && !diff.Password
	out.Files = fileChanges(oldIgn, newIgn, diff.Files)
	out.Units = unitChanges(oldIgn, newIgn, diff.Units)
	for _, v := range render.CheckReconcilable(oldIgn, newIgn, current.Spec.FIPS, next.Spec.FIPS, policies.Irreconcilable) {
		out.Unreconcilable = append(out.Unreconcilable, v.String())
	}
	out.Refused = agent.Refused
	out.Disruption = disruption(agent)
	if len(out.Refusals()) > 0 {
		// Nothing reaches the nodes: the pool degrades instead. "none" would read as safe.
		out.Disruption = "refused"
	}
	return out, nil
}

func actionWords(actions []plan.Action) []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = a.String()
	}
	return out
}

// disruption condenses the agent's actions into the verdict admins ask for.
func disruption(p plan.Plan) string {
	switch {
	case p.NeedsReboot():
		return "drain+reboot"
	case len(p.Actions) == 1 && p.Actions[0].Type == plan.None:
		return "none"
	}
	words := make([]string, 0, len(p.Actions))
	for _, a := range p.Actions {
		// Lower case as in the verdict's other words; DaemonReload as systemctl spells it.
		words = append(words, strings.Replace(strings.ToLower(a.String()), "daemonreload", "daemon-reload", 1))
	}
	return strings.Join(words, ", ")
}

func kernelArguments(old, new []string) *KernelArguments {
	var k KernelArguments
	for _, a := range new {
		if !slices.Contains(old, a) {
			k.Added = append(k.Added, a)
		}
	}
	for _, a := range old {
		if !slices.Contains(new, a) {
			k.Removed = append(k.Removed, a)
		}
	}
	if len(k.Added) == 0 && len(k.Removed) == 0 {
		return nil
	}
	return &k
}

// fieldChanges lists the fields the agent's diff finds changed (so "" and "default" kernel
// types are no change, as on the node).
func fieldChanges(old, new mcfgv1.MachineConfigSpec, d plan.Diff) []FieldChange {
	var out []FieldChange
	add := func(changed bool, field, o, n string) {
		if changed {
			out = append(out, FieldChange{Field: field, Old: o, New: n})
		}
	}
	add(d.OSImageURL, "osImageURL", old.OSImageURL, new.OSImageURL)
	add(d.KernelType, "kernelType", osimage.CanonicalKernelType(old.KernelType), osimage.CanonicalKernelType(new.KernelType))
	add(d.Extensions, "extensions", strings.Join(old.Extensions, ","), strings.Join(new.Extensions, ","))
	add(d.FIPS, "fips", fmt.Sprint(old.FIPS), fmt.Sprint(new.FIPS))
	return out
}

func summary(p *Plan) string {
	if p.Rendered == p.Current {
		return fmt.Sprintf("no change: pool %s stays on %s", p.Pool, p.Current)
	}
	parts := []string{count(len(p.Files), "file"), count(len(p.Units), "unit")}
	if p.KernelArguments != nil {
		parts = append(parts, "kernel arguments")
	}
	if p.SSHKeysChanged || p.PasswordChanged {
		parts = append(parts, "core user")
	}
	if p.UsersChanged {
		parts = append(parts, "passwd users")
	}
	for _, f := range p.Fields {
		parts = append(parts, f.Field)
	}
	from := ""
	if len(p.Sources) > 0 {
		from = fmt.Sprintf(" from %d MachineConfigs", len(p.Sources))
	}
	return fmt.Sprintf("%s → %s%s; changes %s", p.Current, p.Rendered, from, strings.Join(parts, ", "))
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
