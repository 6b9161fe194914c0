package changeplan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/daemon/plan"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/rollback"
	"github.com/mco-dev/mco/internal/rollout"
)

// Cluster is what a live plan reads from the cluster.
type Cluster struct {
	Pools []*mcfgv1.MachineConfigPool
	// MachineConfigs are all of them, rendered ones included (the groups' current configs).
	MachineConfigs []*mcfgv1.MachineConfig
	Nodes          []*corev1.Node
	// Policies is plan.PoliciesOf MachineConfiguration cluster, or the defaults without one.
	Policies plan.Policies
	// Rollouts are the MachineConfigPoolRollouts (nil where the kind is not served) and Now the
	// time of the reading: a node's blocked or skipped drain is noted with its step (drain.go).
	Rollouts []rolloutv1.MachineConfigPoolRollout
	Now      time.Time
}

// Applied is the change: manifests about to be applied with `kubectl apply`.
type Applied struct {
	MachineConfigs []*mcfgv1.MachineConfig
	Pools          []*mcfgv1.MachineConfigPool
	// Manifests hold the objects as written, so fields they leave out are kept as apply keeps them.
	Manifests Manifests
}

// Report is a live plan: every affected pool, and for each group of its nodes the plan.
type Report struct {
	Pools []PoolReport `json:"pools"`
	// Notes are about the whole plan: where render defaults came from, what no client can see.
	Notes []string `json:"notes,omitempty"`
}

// PoolReport is one pool after the change.
type PoolReport struct {
	Pool string `json:"pool"`
	// Target is the rendered config the pool targets now (spec.configuration); "" for a new pool.
	Target string `json:"target"`
	// Rendered is the pool's new rendered config; equal to Target when the change leaves it.
	Rendered string   `json:"rendered,omitempty"`
	Sources  []string `json:"sources,omitempty"`
	Summary  string   `json:"summary"`
	Paused   bool     `json:"paused,omitempty"`
	// Unreconcilable is what the controller refuses to render over Target: the pool would go
	// RenderDegraded and keep Target instead of moving any node.
	Unreconcilable []string `json:"unreconcilable,omitempty"`
	// Error is why the pool does not render after the change (RenderDegraded too).
	Error string `json:"error,omitempty"`
	// Warnings are what Ignition only warns about in the pool's MachineConfigs after the
	// change: it renders as OpenShift's would, and the pool's RenderWarnings condition names them.
	Warnings []render.Warning `json:"warnings,omitempty"`
	Notes    []string         `json:"notes,omitempty"`
	Groups   []NodeGroup      `json:"groups"`
	// Adoptions are the pool's nodes mco did not boot that wait for adoption, each with the
	// plan its agent published (they are in no group: they run no rendered config).
	Adoptions []Adoption `json:"adoptions,omitempty"`
}

// ForceFileNote is said in every live plan: what only the node knows.
const ForceFileNote = "node-local state is not visible to the cluster: a node with the force file (/run/machine-config-daemon-force) rewrites every file and " +
	"a node whose agent recorded a reboot it still owes (/run/machine-config-daemon/reboot-pending) reboots, whatever this plan says; " +
	"and the agent stages only the kernel arguments and OS image its booted system lacks"

// Live plans applied against the cluster: the cluster's MachineConfigs and pools overlaid with
// the applied ones, each affected pool (or only the pool named) rendered as the render
// controller would, and each group of its nodes planned from the config it runs. A pool that
// does not render carries the error in its report; the error returned is for an unknown pool or a
// manifest that cannot be laid over the cluster's object.
func Live(c Cluster, applied Applied, only string) (*Report, error) {
	mcs, err := OverlayMachineConfigs(c.MachineConfigs, applied.MachineConfigs, applied.Manifests)
	if err != nil {
		return nil, err
	}
	pools, err := OverlayPools(c.Pools, applied.Pools, applied.Manifests)
	if err != nil {
		return nil, err
	}
	names := Affected(c.Pools, pools, c.MachineConfigs, mcs, applied.MachineConfigs, applied.Pools)
	if only != "" {
		if !slices.ContainsFunc(pools, func(p *mcfgv1.MachineConfigPool) bool { return p.Name == only }) {
			return nil, fmt.Errorf("--pool %s: no MachineConfigPool %q on the cluster or in the manifests", only, only)
		}
		names = []string{only}
	}
	defaults, notes := InferDefaults(c.Pools, c.MachineConfigs)
	r := &Report{Notes: append(notes, ForceFileNote), Pools: []PoolReport{}}
	byName := make(map[string]*mcfgv1.MachineConfig, len(c.MachineConfigs))
	for _, mc := range c.MachineConfigs {
		byName[mc.Name] = mc
	}
	before := rollout.NewPools(c.Pools)
	for _, name := range names {
		i := slices.IndexFunc(pools, func(p *mcfgv1.MachineConfigPool) bool { return p.Name == name })
		r.Pools = append(r.Pools, planPool(pools[i], pools, mcs, byName, before, c, defaults))
	}
	return r, nil
}

func planPool(pool *mcfgv1.MachineConfigPool, pools []*mcfgv1.MachineConfigPool, mcs []*mcfgv1.MachineConfig,
	byName map[string]*mcfgv1.MachineConfig, before *rollout.Pools, c Cluster, defaults render.Defaults) PoolReport {
	target := byName[pool.Spec.Configuration.Name]
	out := PoolReport{Pool: pool.Name, Target: pool.Spec.Configuration.Name, Paused: pool.Spec.Paused, Groups: []NodeGroup{}}
	members, unmanaged, ambiguous := rollout.Split(pool, pools, c.Nodes)
	// The agents' plans stand whether or not the change renders.
	out.Adoptions = adoptions(pool, unmanaged, "")
	if out.Paused {
		out.Notes = append(out.Notes, "paused: the controller renders the change but moves no node until the pool is unpaused")
	}
	if out.Target != "" && target == nil {
		out.Notes = append(out.Notes, fmt.Sprintf("the pool's target %s is not on the cluster", out.Target))
	}
	res, err := render.Render(pool, mcs, render.Options{Defaults: defaults, ControllerVersion: controllerVersion(target)})
	if err != nil {
		out.Error = err.Error()
		out.Summary = fmt.Sprintf("pool %s does not render after the change; it would keep %s (RenderDegraded)", pool.Name, orNone(out.Target))
		return out
	}
	next := res.Config
	out.Warnings = res.Warnings
	for _, s := range res.Sources {
		out.Sources = append(out.Sources, s.Name)
	}
	if held, note, err := heldTarget(pool, next.Name, byName); err != nil {
		out.Error = err.Error()
		return out
	} else if note != "" {
		out.Notes = append(out.Notes, note)
		if held != nil {
			next, out.Sources = held.config, held.sources
			res = &render.Result{Config: held.config, Ignition: held.ignition}
		}
	}
	out.Rendered = next.Name
	out.Summary = fmt.Sprintf("new pool: renders %s from %d MachineConfigs", next.Name, len(out.Sources))
	// Every plan is to next, whose Ignition Render already parsed; and a plan's summary counts
	// the sources it carries.
	planFrom := func(current *mcfgv1.MachineConfig) (*Plan, error) {
		p, err := compare(pool.Name, current, next, res.Ignition, c.Policies)
		if err != nil {
			return nil, err
		}
		p.Sources = out.Sources
		p.Summary = summary(p)
		return p, nil
	}
	if target != nil {
		p, err := planFrom(target)
		if err != nil {
			out.Error = err.Error()
			return out
		}
		out.Summary, out.Unreconcilable = p.Summary, p.Unreconcilable
	}

	for _, a := range ambiguous {
		out.Notes = append(out.Notes, a.Error())
	}
	out.Adoptions = adoptions(pool, unmanaged, out.Rendered)
	switch {
	case len(members) == 0 && len(unmanaged) == 0:
		out.Notes = append(out.Notes, "no node is in this pool")
	case len(members) == 0:
		out.Notes = append(out.Notes, "no node of this pool is managed by mco yet")
	}
	out.Groups = GroupNodes(members)
	for i := range out.Groups {
		g := &out.Groups[i]
		for j, n := range g.Nodes {
			if was, _ := before.PrimaryPool(nodeNamed(members, n.Name)); was != pool.Name {
				g.Nodes[j].Notes = append(g.Nodes[j].Notes, fmt.Sprintf("joins this pool from %s", orNone(was)))
			}
			if note := drainNote(nodeNamed(members, n.Name), pool, members, c); note != "" {
				g.Nodes[j].Notes = append(g.Nodes[j].Notes, note)
			}
		}
		if g.Current == "" {
			// Nodes mco did not boot, given the target when their adoption was approved: no
			// rendered config to plan from; their agents apply the adoption plan they published.
			g.Adopting = true
			continue
		}
		current := byName[g.Current]
		if current == nil {
			g.Error = fmt.Sprintf("rendered config %s, which these nodes run, is not on the cluster: cannot plan from it", g.Current)
			continue
		}
		p, err := planFrom(current)
		if err != nil {
			g.Error = err.Error()
			continue
		}
		g.Plan = p
	}
	return out
}

// held is the earlier rendered config a rollback holds a pool on instead of its render.
type held struct {
	config   *mcfgv1.MachineConfig
	ignition ignition.Config
	sources  []string
}

// heldTarget is what the render controller does with the pool's rollback annotation
// (rollback.Hold) when the pool's MachineConfigs render rendered: the config it holds the pool
// on instead (nil: the render), and a note saying so; or a note that the render ends the hold,
// or that the hold is refused and the pool keeps its target.
func heldTarget(pool *mcfgv1.MachineConfigPool, rendered string, byName map[string]*mcfgv1.MachineConfig) (*held, string, error) {
	d := rollback.Hold(pool, rendered, func(name string) bool { return byName[name] != nil })
	switch {
	case d.Condition == nil:
		return nil, "", nil
	case d.Clear:
		return nil, "rolled back no more: " + d.Condition.Message, nil
	case d.Condition.Status != corev1.ConditionTrue:
		return nil, "", nil
	}
	target := d.Target
	if target == "" {
		target = pool.Spec.Configuration.Name
	}
	note := "rolled back: " + d.Condition.Message
	if d.Condition.Reason != rollback.ReasonHeld {
		note = "rollback refused: " + d.Condition.Message
	}
	mc := byName[target]
	if target == rendered || mc == nil {
		return nil, note, nil
	}
	ign, err := ignition.Parse(mc.Spec.Config.Raw)
	if err != nil {
		return nil, "", fmt.Errorf("rendered config %s, which a rollback holds pool %s on: spec.config: %w", target, pool.Name, err)
	}
	h := &held{config: mc, ignition: ign}
	if pool.Status.Configuration.Name == target {
		for _, s := range pool.Status.Configuration.Source {
			h.sources = append(h.sources, s.Name)
		}
	}
	return h, note, nil
}

func nodeNamed(nodes []*corev1.Node, name string) *corev1.Node {
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// ExitCode is what `mco plan` exits with: 2 when a pool does not render, a change is
// unreconcilable or refused by the agent, or a group cannot be planned; 1 when a node would be
// drained or rebooted (a reboot already queued counts); 0 otherwise.
func (r *Report) ExitCode() int {
	code := 0
	for _, p := range r.Pools {
		if p.Error != "" || len(p.Unreconcilable) > 0 {
			return 2
		}
		for _, g := range p.Groups {
			if g.Error != "" || (g.Plan != nil && len(g.Plan.Refusals()) > 0) {
				return 2
			}
			// A paused pool only postpones the disruption to its unpausing.
			if g.Plan != nil && g.Plan.Disrupts() {
				code = 1
			}
			for _, n := range g.Nodes {
				if n.RebootPending {
					code = 1
				}
			}
		}
		for _, a := range p.Adoptions {
			if a.Disrupts() {
				code = 1
			}
		}
	}
	return code
}

// Why says in one line what made ExitCode non-zero.
func (r *Report) Why() string {
	var parts []string
	for _, p := range r.Pools {
		switch {
		case p.Error != "":
			parts = append(parts, fmt.Sprintf("pool %s does not render: %s", p.Pool, p.Error))
		case len(p.Unreconcilable) > 0:
			parts = append(parts, fmt.Sprintf("pool %s: the controller would refuse this change: %s", p.Pool, strings.Join(p.Unreconcilable, "; ")))
		}
		for _, g := range p.Groups {
			var who []string
			for _, n := range g.Nodes {
				who = append(who, n.Name)
			}
			switch {
			case g.Error != "":
				parts = append(parts, fmt.Sprintf("pool %s: %s", p.Pool, g.Error))
			case g.Plan != nil && len(g.Plan.Refusals()) > 0:
				parts = append(parts, fmt.Sprintf("pool %s: nodes on %s would refuse the change: %s", p.Pool, g.Current, strings.Join(g.Plan.Refusals(), "; ")))
			case g.Plan != nil && g.Plan.Disrupts():
				parts = append(parts, fmt.Sprintf("pool %s: %s would be %s", p.Pool, firstNames(who), map[bool]string{true: "drained and rebooted", false: "drained"}[g.Plan.Reboot]))
			}
			for _, n := range g.Nodes {
				if n.RebootPending {
					parts = append(parts, fmt.Sprintf("pool %s: %s has a reboot pending", p.Pool, n.Name))
				}
			}
		}
		for _, a := range p.Adoptions {
			if a.Disrupts() {
				parts = append(parts, fmt.Sprintf("pool %s: %s, approved for adoption, would be %s", p.Pool, a.Node,
					map[bool]string{true: "rebooted", false: "drained"}[a.Plan.Reboot]))
			}
		}
	}
	return strings.Join(parts, "; ")
}

// firstNames names at most three nodes, so a group of 500 still makes a one-line reason.
func firstNames(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}
