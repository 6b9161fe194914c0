package operatorstatus

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/poolcondition"
)

// Name is the ClusterOperator mco reports as, OpenShift's operator's name.
const Name = "machine-config"

// OperatorVersionName is the entry of status.versions that carries the operator's version.
const OperatorVersionName = "operator"

// Condition reasons.
const (
	ReasonAsExpected                 = "AsExpected"
	ReasonRequiredPoolsFailed        = "RequiredPoolsFailed"
	ReasonMachineConfigurationFailed = "MachineConfigurationFailed"
	ReasonDegradedPool               = "DegradedPool"
	// ReasonPoolsUpdating is mco's: OpenShift's operator does not report pool rollouts.
	ReasonPoolsUpdating = "MachineConfigPoolsUpdating"
)

// Event reasons, OpenShift's operator's.
const (
	EventVersionChanged = "OperatorVersionChanged"
	// EventDegraded is followed by ": <condition reason>".
	EventDegraded = "OperatorDegraded"
)

// Inputs is everything the status is computed from.
type Inputs struct {
	// Version is the operator version this controller reports once the upgrade rule holds.
	Version string
	// ControllerVersion is what the render controller stamps as generated-by-controller-version
	// on the configs it renders.
	ControllerVersion string
	// Namespace is where mco runs; must-gather collects it (relatedObjects).
	Namespace string
	Pools     []mcfgv1.MachineConfigPool
	// ConfigVersions maps the MachineConfigs ConfigNames lists to their
	// generated-by-controller-version annotation ("" for a config without it); a config that does
	// not exist is absent.
	ConfigVersions map[string]string
	// MachineConfiguration is MachineConfiguration `cluster`, nil when there is none.
	MachineConfiguration    *operatorv1.MachineConfiguration
	KubeletConfigs          []mcfgv1.KubeletConfig
	ContainerRuntimeConfigs []mcfgv1.ContainerRuntimeConfig
	Now                     metav1.Time
}

// Event is one event to record on the ClusterOperator after the status was written.
type Event struct {
	Warning         bool
	Reason, Message string
}

// Result is the status to write.
type Result struct {
	Status configv1.ClusterOperatorStatus
	// Changed is false when Status equals the current status: nothing to write.
	Changed bool
	Events  []Event
}

// Compute derives the ClusterOperator status from in, starting from current so transition
// times, and conditions other than its own, are kept.
func Compute(current configv1.ClusterOperatorStatus, in Inputs) Result {
	pools := slices.Clone(in.Pools)
	slices.SortFunc(pools, func(a, b mcfgv1.MachineConfigPool) int { return cmp.Compare(a.Name, b.Name) })
	st := *current.DeepCopy()
	var events []Event

	degradedPools := degradedPoolErrors(pools)
	waiting, paused := requiredPoolsWaiting(pools, in.ConfigVersions, in.ControllerVersion)
	var reason, syncErr string
	switch {
	case bootImageError(in.MachineConfiguration) != "":
		reason, syncErr = ReasonMachineConfigurationFailed, bootImageError(in.MachineConfiguration)
	case len(degradedPools) > 0 || len(paused) > 0:
		reason, syncErr = ReasonRequiredPoolsFailed, strings.Join(append(degradedPools, paused...), "; ")
	}

	want := []configv1.OperandVersion{{Name: OperatorVersionName, Version: in.Version}}
	upgrading := !sameVersions(current.Versions, want)
	if syncErr == "" && len(waiting) == 0 && upgrading {
		st.Versions = want
		events = append(events, Event{Reason: EventVersionChanged,
			Message: fmt.Sprintf("clusteroperator/%s version changed from %v to %v", Name, current.Versions, want)})
		upgrading = false
	}

	progressing := progressingCondition(pools, in.Version, upgrading, syncErr != "")
	if upgrading && !workingTowards(current.Conditions, in.Version) {
		events = append(events, Event{Reason: EventVersionChanged,
			Message: fmt.Sprintf("clusteroperator/%s started a version change from %v to %v", Name, current.Versions, want)})
	}
	degraded := configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorDegraded, Status: configv1.ConditionFalse}
	if syncErr != "" {
		degraded.Status, degraded.Reason = configv1.ConditionTrue, reason
		if upgrading {
			degraded.Message = fmt.Sprintf("Unable to apply %s: %s", in.Version, syncErr)
		} else {
			degraded.Message = fmt.Sprintf("Failed to resync %s because: %s", in.Version, syncErr)
		}
		if old := findCondition(current.Conditions, configv1.OperatorDegraded); old == nil || old.Status != configv1.ConditionTrue ||
			old.Reason != degraded.Reason || old.Message != degraded.Message {
			events = append(events, Event{Warning: true, Reason: EventDegraded + ": " + reason, Message: degraded.Message})
		}
	}

	for _, c := range []configv1.ClusterOperatorStatusCondition{
		{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue, Reason: ReasonAsExpected,
			Message: fmt.Sprintf("Cluster has deployed %s", st.Versions)},
		progressing,
		degraded,
		upgradeableCondition(pools),
		evaluationCondition(in.KubeletConfigs, in.ContainerRuntimeConfigs),
	} {
		setCondition(&st.Conditions, c, in.Now)
	}
	st.RelatedObjects = RelatedObjects(in.Namespace)

	lastSyncError := syncErr
	if lastSyncError == "" {
		lastSyncError = strings.Join(waiting, "; ")
	}
	st.Extension = extension(current.Extension, pools, lastSyncError)

	return Result{Status: st, Changed: !equality.Semantic.DeepEqual(current, st), Events: events}
}

// progressingCondition: the upgrade first (OpenShift's forms), then pools rolling out (mco's).
func progressingCondition(pools []mcfgv1.MachineConfigPool, version string, upgrading, degraded bool) configv1.ClusterOperatorStatusCondition {
	c := configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorProgressing, Status: configv1.ConditionTrue}
	var updating []string
	for i := range pools {
		if poolcondition.IsTrue(&pools[i].Status, mcfgv1.MachineConfigPoolUpdating) {
			updating = append(updating, fmt.Sprintf("%s: %s", pools[i].Name, poolStatus(&pools[i])))
		}
	}
	switch {
	case upgrading && degraded:
		c.Message = fmt.Sprintf("Unable to apply %s", version)
	case upgrading:
		c.Message = fmt.Sprintf("Working towards %s", version)
	case len(updating) > 0:
		c.Reason = ReasonPoolsUpdating
		c.Message = fmt.Sprintf("Cluster version is %s; MachineConfigPools updating: %s", version, strings.Join(updating, "; "))
	case degraded:
		c.Status, c.Message = configv1.ConditionFalse, fmt.Sprintf("Error while reconciling %s", version)
	default:
		c.Status, c.Message = configv1.ConditionFalse, fmt.Sprintf("Cluster version is %s", version)
	}
	return c
}

// workingTowards reports whether conditions already say the operator is moving to version, so
// the "started a version change" event is recorded once per upgrade.
func workingTowards(conditions []configv1.ClusterOperatorStatusCondition, version string) bool {
	c := findCondition(conditions, configv1.OperatorProgressing)
	return c != nil && c.Status == configv1.ConditionTrue &&
		(c.Message == "Working towards "+version || c.Message == "Unable to apply "+version)
}

func upgradeableCondition(pools []mcfgv1.MachineConfigPool) configv1.ClusterOperatorStatusCondition {
	for i := range pools {
		if poolcondition.IsTrue(&pools[i].Status, mcfgv1.MachineConfigPoolDegraded) {
			return configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionFalse,
				Reason:  ReasonDegradedPool,
				Message: "One or more machine config pools are degraded, please see `oc get mcp` for further details and resolve before upgrading"}
		}
	}
	return configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionTrue, Reason: ReasonAsExpected}
}

// bootImageError is OpenShift's MachineConfiguration sync error for a degraded boot image
// controller, or "".
func bootImageError(mc *operatorv1.MachineConfiguration) string {
	if mc == nil {
		return ""
	}
	c := meta.FindStatusCondition(mc.Status.Conditions, operatorv1.MachineConfigurationBootImageUpdateDegraded)
	if c == nil || c.Status != metav1.ConditionTrue {
		return ""
	}
	return "bootimage update failed: " + c.Message
}

// sameVersions compares version lists as sets of name=version, as OpenShift's version store does.
func sameVersions(a, b []configv1.OperandVersion) bool {
	if len(a) != len(b) {
		return false
	}
	for _, v := range a {
		if !slices.Contains(b, v) {
			return false
		}
	}
	return true
}
