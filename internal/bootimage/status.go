package bootimage

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachineConfiguration condition types (OpenShift's). Both are always present once the
// controller ran.
const (
	// ConditionProgressing is True while the last pass patched MachineSets and has not yet seen
	// them settle; False when every enrolled MachineSet was up to date or skipped.
	ConditionProgressing = "BootImageUpdateProgressing"
	// ConditionDegraded is True when a MachineSet could not be reconciled (malformed, API error,
	// hot loop) or the boot image source is missing or invalid.
	ConditionDegraded = "BootImageUpdateDegraded"
)

// Condition reasons.
const (
	ReasonDisabled      = "Disabled"
	ReasonSourceInvalid = "BootImageSourceInvalid"
	ReasonPatched       = "MachineSetsPatched"
	ReasonReconciled    = "Reconciled"
	ReasonErrors        = "MachineSetErrors"
	ReasonAsExpected    = "AsExpected"
)

// maxListed bounds how many MachineSets a condition message names, so a cluster with hundreds
// of failing MachineSets keeps a readable (and storable) status.
const maxListed = 10

// Tally counts one pass over the enrolled MachineSets.
type Tally struct {
	Enrolled, UpToDate, Patched int
	// Skipped names each skipped MachineSet with its reason.
	Skipped []string
	// Errors is one "name: error" per MachineSet that could not be reconciled.
	Errors []string
}

// Reconciled counts the MachineSets that need nothing more: up to date, patched or skipped.
func (t Tally) Reconciled() int { return t.UpToDate + t.Patched + len(t.Skipped) }

// Pass is the outcome of one reconcile, from which the conditions are computed.
type Pass struct {
	// Disabled: the configuration enrolls no MachineSets.
	Disabled bool
	// SourceErr: the configuration or the coreos-bootimages ConfigMap is unusable.
	SourceErr error
	Tally     Tally
}

// Degraded reports whether the pass leaves the controller degraded.
func (p Pass) Degraded() bool { return p.SourceErr != nil || len(p.Tally.Errors) > 0 }

// Conditions computes both conditions of a pass. Transition times are left to
// meta.SetStatusCondition, which keeps them when only the message changes.
func Conditions(p Pass, generation int64) []metav1.Condition {
	cond := func(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: generation}
	}
	switch {
	case p.SourceErr != nil:
		return []metav1.Condition{
			cond(ConditionProgressing, metav1.ConditionFalse, ReasonSourceInvalid, "Boot images cannot be updated: "+p.SourceErr.Error()),
			cond(ConditionDegraded, metav1.ConditionTrue, ReasonSourceInvalid, p.SourceErr.Error()),
		}
	case p.Disabled:
		msg := "Boot image updates are disabled for MachineSets"
		return []metav1.Condition{
			cond(ConditionProgressing, metav1.ConditionFalse, ReasonDisabled, msg),
			cond(ConditionDegraded, metav1.ConditionFalse, ReasonDisabled, msg),
		}
	}
	t := p.Tally
	progress := fmt.Sprintf("Reconciled %d of %d MachineSets (%d skipped)", t.Reconciled(), t.Enrolled, len(t.Skipped))
	if len(t.Skipped) > 0 {
		progress += "; skipped: " + list(t.Skipped)
	}
	progressing := cond(ConditionProgressing, metav1.ConditionFalse, ReasonReconciled, progress)
	if t.Patched > 0 {
		progressing = cond(ConditionProgressing, metav1.ConditionTrue, ReasonPatched, fmt.Sprintf("%s; patched %d", progress, t.Patched))
	}
	degraded := cond(ConditionDegraded, metav1.ConditionFalse, ReasonAsExpected, fmt.Sprintf("0 of %d MachineSets degraded", t.Enrolled))
	if len(t.Errors) > 0 {
		degraded = cond(ConditionDegraded, metav1.ConditionTrue, ReasonErrors,
			fmt.Sprintf("%d of %d MachineSets degraded: %s", len(t.Errors), t.Enrolled, list(t.Errors)))
	}
	return []metav1.Condition{progressing, degraded}
}

func list(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:maxListed], "; ") + fmt.Sprintf("; and %d more", len(items)-maxListed)
}
