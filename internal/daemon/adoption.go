package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/adoption"
	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/drift"
	"github.com/mco-dev/mco/internal/daemon/hostlayout"
	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/plan"
	"github.com/mco-dev/mco/internal/daemon/plantedlink"
	"github.com/mco-dev/mco/internal/machineconfignode"
	"github.com/mco-dev/mco/internal/protocol"
)

// adoptionRecheck is how often a node waiting for adoption compares the host again: an admin
// may bring the host's files in line by hand instead of approving.
const adoptionRecheck = 2 * time.Minute

// considerAdoption is the agent's side of adopting a node mco did not boot (protocol's
// adoption exchange): nothing committed, no currentConfig, no desiredConfig. With a target
// offered, a host that already satisfies it is recorded as in it (no drain, reboot or change
// to any host file); otherwise what adopting would do is published and the node waits.
func (a *Agent) considerAdoption(ctx context.Context, node *corev1.Node) error {
	target := annotation(node, protocol.AdoptionTargetAnnotation)
	if target == "" {
		return nil // in no pool, or the pool has no config yet: nothing to be in
	}
	// A node booted by mco whose first-boot record startup has not consumed yet is no
	// stranger: startup seeds it.
	if seeded, err := a.root.Exists(NodeAnnotationsPath); err != nil || seeded {
		return err
	}
	next, err := a.load(ctx, target)
	if err != nil {
		return err
	}
	policies, err := a.kube.policies(ctx)
	if err != nil {
		return err
	}
	osc, refused, err := a.adoptionOSChange(ctx, target, next)
	if err != nil {
		return err
	}
	// Before hostDiff reads the host's files through a planted link.
	planted, err := plantedlink.InSet(a.root, next.set)
	if err != nil {
		return err
	}
	if planted != nil {
		refused = append(refused, planted.Error())
	}
	diff, p, err := a.hostDiff(ctx, next)
	if err != nil {
		return err
	}
	p.Target = target
	p.Refused = append(p.Refused, refused...)
	if next.hostErr != nil {
		p.Refused = append(p.Refused, next.hostErr.Error())
	}
	if refusal, err := a.kubeletDropInRefusal(next); err != nil {
		return err
	} else if refusal != nil {
		p.Refused = append(p.Refused, refusal.Error())
	}
	rt, err := a.runtime()
	if err != nil {
		return err
	}
	hostlayout.AdjustDiff(rt, &diff)
	applyOSChange(&diff, osc)
	p.OS = diff.OSChanges()
	pl := plan.Compute(diff, policies)
	hostlayout.AdjustPlan(rt, &pl)
	p.Actions, p.Drain, p.Reboot = pl.String(), pl.NeedsDrain(), pl.NeedsReboot()
	p.Refused = append(p.Refused, pl.Refused...)
	if p.Matches() {
		return a.adoptInPlace(ctx, target, next)
	}
	a.armAdoptionRecheck()
	return a.publishAdoption(ctx, node, p)
}

// adoptionOSChange is what the booted system lacks of next's OS fields, and what of it this
// host cannot apply (refused, with the reason).
func (a *Agent) adoptionOSChange(ctx context.Context, target string, next *loaded) (osimage.Change, []string, error) {
	osc, err := a.osChange(ctx, mcfgv1.MachineConfigSpec{}, next.mc.Spec, false)
	if unsupported := (*osimage.UnsupportedError)(nil); errors.As(err, &unsupported) {
		return osimage.Change{}, []string{err.Error()}, nil
	}
	if err != nil {
		return osimage.Change{}, nil, err
	}
	var refused []string
	if err := a.hostConflict(target, &loaded{ign: next.ign}, next); err != nil {
		if conflict := (*hostlayout.ConflictError)(nil); !errors.As(err, &conflict) {
			return osimage.Change{}, nil, err
		}
		refused = append(refused, err.Error())
	}
	return osc, refused, nil
}

// applyOSChange sets the plan's OS flags from what the booted system lacks, as update does.
func applyOSChange(diff *plan.Diff, osc osimage.Change) {
	diff.OSImageURL = osc.OSImageURL != ""
	diff.KernelArguments = osc.KernelArgs
	diff.Extensions = osc.ExtensionsChanged
	diff.KernelType = osc.KernelTypeChanged
}

// hostDiff compares the host with next: the update planner's Diff of what adopting would
// change (files, units, core's keys and password; not the OS fields), and the same as the
// files and units of the plan the Node shows.
func (a *Agent) hostDiff(ctx context.Context, next *loaded) (plan.Diff, adoption.Plan, error) {
	var diff plan.Diff
	var p adoption.Plan
	checker, err := drift.NewChecker(a.root, next.set)
	if err != nil {
		return diff, p, err
	}
	found, err := checker.CheckAll(ctx, a.opts.Systemd)
	if err != nil {
		return diff, p, err
	}
	for _, d := range found {
		if d.Unit != "" {
			addOnce(&diff.Units, d.Unit)
			change := "disable"
			if u := unitOf(next, d.Unit); u != nil && u.Enabled != nil && *u.Enabled {
				change = "enable"
			}
			p.Units = append(p.Units, adoption.UnitChange{Name: d.Unit, Change: change})
			continue
		}
		e, _ := next.set.Lookup(d.Path)
		switch {
		case e.OnlyIfUser != "":
			diff.SSHKeys, diff.Passwd = true, true
		case e.Unit != "":
			addOnce(&diff.Units, e.Unit)
		default:
			diff.Files = append(diff.Files, d.Path)
		}
		fc, host, err := a.fileChange(d, e)
		if err != nil {
			return diff, p, err
		}
		if d.Path == plan.RegistriesConfPath {
			diff.RegistriesConf = &plan.Contents{Old: host, New: e.Data}
		}
		p.Files = append(p.Files, fc)
	}
	ok, err := apply.CorePasswordSatisfied(a.root, next.set)
	if err != nil {
		return diff, p, err
	}
	if !ok {
		diff.Password, diff.Passwd, p.Password = true, true, true
	}
	return diff, p, nil
}

// fileChange says what differs at one path, and the host's data there when it is a regular
// file (nil otherwise).
func (a *Agent) fileChange(d *drift.Error, want nodefiles.Entry) (adoption.FileChange, []byte, error) {
	fc := adoption.FileChange{Path: d.Path, Change: adoption.ChangeContent}
	info, err := a.root.Lstat(d.Path)
	if err != nil {
		return fc, nil, err
	}
	switch {
	case info.Type == noderoot.Missing:
		fc.Change = adoption.ChangeCreate
		return fc, nil, nil
	case want.Link != "":
		fc.Change = adoption.ChangeLink
		if info.Type != noderoot.Regular {
			return fc, nil, nil
		}
	case info.Type != noderoot.Regular:
		fc.Change, fc.Note = adoption.ChangeType, "the host has no regular file there"
		return fc, nil, nil
	case strings.HasPrefix(d.What, "mode mismatch"):
		fc.Change, fc.Note = adoption.ChangeMode, fmt.Sprintf("mode %#o on the host, %#o in the config", info.Perm, want.Perm)
	}
	host, err := a.root.ReadFile(d.Path)
	if err != nil {
		return fc, nil, err
	}
	if fc.Change == adoption.ChangeContent || fc.Change == adoption.ChangeLink {
		if want.Link != "" {
			fc.Note = "the config has a link to " + want.Link + " there"
		} else {
			fc.Diff, fc.Note = adoption.ContentDiff(d.Path, host, info.Perm, want.Data, want.Perm)
		}
	}
	return fc, host, nil
}

func addOnce(list *[]string, s string) {
	if !slices.Contains(*list, s) {
		*list = append(*list, s)
	}
}

func unitOf(l *loaded, name string) *nodefiles.Unit {
	for i := range l.set.Units {
		if l.set.Units[i].Name == name {
			return &l.set.Units[i]
		}
	}
	return nil
}

// adoptInPlace records a host that already satisfies target as in it: the files' originals
// (identical to the config's, so `mco daemon revert` has them) and the config record, then
// desiredConfig; the next pass settles it like any node, verifying all of it before Done.
func (a *Agent) adoptInPlace(ctx context.Context, target string, next *loaded) error {
	if err := apply.RecordOriginals(a.root, next.set); err != nil {
		return err
	}
	record, err := json.Marshal(next.mc)
	if err != nil {
		return err
	}
	// A config with nothing in it recorded no original: the state directory may not exist yet.
	if _, err := a.root.MkdirAll(path.Dir(apply.CurrentConfigPath), noderoot.DirSpec{Perm: 0o755}); err != nil {
		return err
	}
	err = a.root.WriteFile(apply.CurrentConfigPath, record, noderoot.WriteOptions{Perm: 0o644})
	a.forgetCommitted()
	if err != nil {
		return err
	}
	a.opts.Log.Info("adopted the node: the host already is in its pool's config", "node", a.opts.NodeName, "config", target)
	a.kube.event(corev1.EventTypeNormal, "Adopted", "The host already is in %s: adopted without a drain, a reboot or a change to its files", target)
	return a.kube.patchAnnotations(ctx, map[string]*string{
		protocol.DesiredConfigAnnotation: &target,
		protocol.AdoptionAnnotation:      nil,
		protocol.AdoptionPlanAnnotation:  nil,
	})
}

// publishAdoption shows on the Node that it waits for the admin, and what adopting would do.
func (a *Agent) publishAdoption(ctx context.Context, node *corev1.Node, p adoption.Plan) error {
	enc, err := adoption.Encode(p)
	if err != nil {
		return err
	}
	a.publishStep(ctx, machineconfignode.Step{Kind: machineconfignode.AdoptionPending, Desired: p.Target, Message: p.Summary()})
	if annotation(node, protocol.AdoptionAnnotation) == protocol.AdoptionPending && annotation(node, protocol.AdoptionPlanAnnotation) == enc {
		return nil
	}
	a.opts.Log.Info("waiting for the admin to approve adoption", "node", a.opts.NodeName, "plan", p.Summary())
	a.kube.event(corev1.EventTypeNormal, "AdoptionPending", "%s; approve with `mco adopt %s`", p.Summary(), a.opts.NodeName)
	pending := protocol.AdoptionPending
	return a.kube.patchAnnotations(ctx, map[string]*string{
		protocol.AdoptionAnnotation:     &pending,
		protocol.AdoptionPlanAnnotation: &enc,
	})
}

// armAdoptionRecheck has the loop compare the host again in adoptionRecheck: nothing else
// wakes it while it waits (the Node does not change).
func (a *Agent) armAdoptionRecheck() {
	if time.Now().Before(a.s.adoptionRecheckAt) {
		return
	}
	a.s.adoptionRecheckAt = time.Now().Add(adoptionRecheck)
	time.AfterFunc(adoptionRecheck, a.poke)
}
