package pacing

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/drainpolicy"
)

// Policy is a validated MachineConfigPoolRollout spec.
type Policy struct {
	// Canary is the first batch's size; nil means no canary.
	Canary *intstr.IntOrString
	// Soak is the wait after each finished batch; 0 means no batches.
	Soak time.Duration
	// GateReady and GateDaemonSets are the health gate's checks.
	GateReady, GateDaemonSets bool
	Windows                   Windows
	Paused                    bool
	// Drain is spec.drain: what happens to a drain that stays blocked.
	Drain drainpolicy.Policy
}

// Compile validates a spec; errors name the field (spec.canary.nodes, spec.maintenanceWindows[0].timeZone).
func Compile(spec rolloutv1.MachineConfigPoolRolloutSpec) (Policy, error) {
	path := field.NewPath("spec")
	var errs field.ErrorList
	p := Policy{
		Soak:           spec.Soak.Duration,
		GateReady:      spec.HealthGate.NodeReady == nil || *spec.HealthGate.NodeReady,
		GateDaemonSets: spec.HealthGate.DaemonSetPodsReady == nil || *spec.HealthGate.DaemonSetPodsReady,
		Paused:         spec.Paused,
	}
	if spec.PoolSelector == nil {
		errs = append(errs, field.Required(path.Child("poolSelector"), "select the pools to pace"))
	} else if _, err := metav1.LabelSelectorAsSelector(spec.PoolSelector); err != nil {
		errs = append(errs, field.Invalid(path.Child("poolSelector"), spec.PoolSelector.String(), err.Error()))
	}
	if spec.Canary != nil {
		n := spec.Canary.Nodes
		if v, err := intstr.GetScaledValueFromIntOrPercent(&n, 100, true); err != nil || v <= 0 {
			errs = append(errs, field.Invalid(path.Child("canary", "nodes"), n.String(), "must be a count or a percent above 0"))
		}
		p.Canary = &n
	}
	if p.Soak < 0 {
		errs = append(errs, field.Invalid(path.Child("soak"), p.Soak.String(), "must not be negative"))
	}
	var drainErrs field.ErrorList
	p.Drain, drainErrs = drainpolicy.Compile(spec.Drain, path.Child("drain"))
	errs = append(errs, drainErrs...)
	ws, windowErrs := compileWindows(spec.MaintenanceWindows, path.Child("maintenanceWindows"))
	errs = append(errs, windowErrs...)
	p.Windows = ws
	if len(errs) > 0 {
		return Policy{}, errs.ToAggregate()
	}
	return p, nil
}

// canarySize is the canary batch for a pool of total nodes; 0 without a canary.
func (p Policy) canarySize(total int) int {
	if p.Canary == nil {
		return 0
	}
	return CanarySize(*p.Canary, total)
}

// CanarySize is the canary batch of spec.canary.nodes for a pool of total nodes: rounded up,
// at least 1, at most total (0 for an empty pool).
func CanarySize(nodes intstr.IntOrString, total int) int {
	if total == 0 {
		return 0
	}
	n, _ := intstr.GetScaledValueFromIntOrPercent(&nodes, total, true)
	return min(max(n, 1), total)
}
