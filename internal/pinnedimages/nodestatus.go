package pinnedimages

import (
	"fmt"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition reasons and messages, OpenShift's agent's words.
const (
	ReasonPrefetch       = "ImagePrefetch"
	ReasonAsExpected     = "AsExpected"
	ReasonPrefetchFailed = "PrefetchFailed"
	MessageComplete      = "All pinned image sets complete"
	MessageAllGood       = "All is good"
)

// ImageError is one image of a set that could not be pulled or pinned, and why.
type ImageError struct {
	Image  string
	Reason string
}

func (e ImageError) String() string { return fmt.Sprintf("image %s: %s", e.Image, e.Reason) }

// Result is how one set stands on a node after a pass.
type Result struct {
	// Pinned: every image of the set at this generation is present and reported pinned by the
	// runtime.
	Pinned bool
	// Failed names the images that were not, each with why; or SetError says why the set as a
	// whole was not tried (the disk guard, a runtime that cannot pin).
	Failed   []ImageError
	SetError string
}

// Message is the set's failure in one line ("" when it has none).
func (r Result) Message() string {
	var parts []string
	if r.SetError != "" {
		parts = append(parts, r.SetError)
	}
	for _, f := range r.Failed {
		parts = append(parts, f.String())
	}
	return strings.Join(parts, "; ")
}

// maxErrorLength is the schema's bound on lastFailedGenerationError.
const maxErrorLength = 32768

// NodeStatus is the MachineConfigNode's status.pinnedImageSets after a pass: one entry per
// wanted set, in order, from prev (what the node reported before) and results (sets missing from
// it are still in progress). Generations never decrease, as the schema demands: a set whose
// generation went down (deleted and created again) keeps the higher numbers until it passes them.
func NodeStatus(prev []mcfgv1.MachineConfigNodeStatusPinnedImageSet, sets []Set, results map[string]Result) []mcfgv1.MachineConfigNodeStatusPinnedImageSet {
	var out []mcfgv1.MachineConfigNodeStatusPinnedImageSet
	for _, s := range sets {
		gen := int32(s.Generation)
		e := mcfgv1.MachineConfigNodeStatusPinnedImageSet{Name: s.Name}
		if i := slices.IndexFunc(prev, func(p mcfgv1.MachineConfigNodeStatusPinnedImageSet) bool { return p.Name == s.Name }); i >= 0 {
			e = prev[i]
		}
		e.DesiredGeneration = max(e.DesiredGeneration, gen)
		if r, ok := results[s.Name]; ok {
			if r.Pinned {
				e.CurrentGeneration = max(e.CurrentGeneration, gen)
				e.LastFailedGeneration, e.LastFailedGenerationError = 0, ""
			} else {
				e.LastFailedGeneration = max(e.LastFailedGeneration, gen)
				e.LastFailedGenerationError = truncate(r.Message(), maxErrorLength)
			}
		}
		out = append(out, e)
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// Conditions are the MachineConfigNode's PinnedImageSetsProgressing and PinnedImageSetsDegraded
// after a pass over sets on node (done: every set has a result), set into conds (other types
// kept; a condition's transition time moves only when its status does).
func Conditions(conds []metav1.Condition, node string, sets []Set, results map[string]Result, done bool, now metav1.Time) []metav1.Condition {
	out := slices.Clone(conds)
	set := func(t mcfgv1.StateProgress, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&out, metav1.Condition{Type: string(t), Status: status, Reason: reason, Message: msg, LastTransitionTime: now})
	}
	var failed []string
	for _, s := range sets {
		if r, ok := results[s.Name]; ok && !r.Pinned {
			failed = append(failed, fmt.Sprintf("PinnedImageSet %s: %s", s.Name, r.Message()))
		}
	}
	if done {
		set(mcfgv1.MachineConfigNodePinnedImageSetsProgressing, metav1.ConditionFalse, ReasonAsExpected, MessageComplete)
	} else {
		set(mcfgv1.MachineConfigNodePinnedImageSetsProgressing, metav1.ConditionTrue, ReasonPrefetch, "node is prefetching images: "+node)
	}
	if len(failed) > 0 {
		set(mcfgv1.MachineConfigNodePinnedImageSetsDegraded, metav1.ConditionTrue, ReasonPrefetchFailed, truncate(strings.Join(failed, "; "), maxErrorLength))
	} else if done || meta.FindStatusCondition(out, string(mcfgv1.MachineConfigNodePinnedImageSetsDegraded)) == nil {
		set(mcfgv1.MachineConfigNodePinnedImageSetsDegraded, metav1.ConditionFalse, ReasonAsExpected, MessageAllGood)
	}
	return out
}

// Updated reports whether a MachineConfigNode's pinned image sets are all in place at the
// generation of sets (the pool's): OpenShift counts a node whose entries all have
// currentGeneration == desiredGeneration; mco also asks that every set of the pool has an entry at
// its present generation, so a node that has not yet seen a new set or generation is not counted.
func Updated(status []mcfgv1.MachineConfigNodeStatusPinnedImageSet, sets []Set) bool {
	for _, s := range sets {
		i := slices.IndexFunc(status, func(e mcfgv1.MachineConfigNodeStatusPinnedImageSet) bool { return e.Name == s.Name })
		if i < 0 || status[i].CurrentGeneration < int32(s.Generation) {
			return false
		}
	}
	for _, e := range status {
		if e.DesiredGeneration > 0 && e.CurrentGeneration != e.DesiredGeneration {
			return false
		}
	}
	return true
}

// ConditionTypes are the MachineConfigNode conditions of pinned image sets.
var ConditionTypes = []mcfgv1.StateProgress{mcfgv1.MachineConfigNodePinnedImageSetsProgressing, mcfgv1.MachineConfigNodePinnedImageSetsDegraded}

// OwnConditions are the conditions of conds whose type is one of ConditionTypes, in their order
// in conds.
func OwnConditions(conds []metav1.Condition) []metav1.Condition {
	var out []metav1.Condition
	for _, c := range conds {
		if slices.Contains(ConditionTypes, mcfgv1.StateProgress(c.Type)) {
			out = append(out, c)
		}
	}
	return out
}
