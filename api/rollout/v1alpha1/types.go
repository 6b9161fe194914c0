package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ResumeAnnotation is the explicit resume marker `mco rollout resume` sets: an RFC 3339 time.
// A resume given after the current batch finished ends its hold (the canary's approval or a
// soak); an older one is spent and does nothing.
const ResumeAnnotation = GroupName + "/resumed-at"

// MachineConfigPoolRollout paces the rollout of the pools it selects.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=mcprollout
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Done",type=integer,JSONPath=`.status.nodesDone`
// +kubebuilder:printcolumn:name="Remaining",type=integer,JSONPath=`.status.nodesRemaining`
// +kubebuilder:printcolumn:name="Next Window",type=string,JSONPath=`.status.nextWindowStart`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`
type MachineConfigPoolRollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MachineConfigPoolRolloutSpec   `json:"spec"`
	Status MachineConfigPoolRolloutStatus `json:"status,omitempty"`
}

// MachineConfigPoolRolloutList is a list of MachineConfigPoolRollouts.
//
// +kubebuilder:object:root=true
type MachineConfigPoolRolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineConfigPoolRollout `json:"items"`
}

// MachineConfigPoolRolloutSpec is the pacing policy.
type MachineConfigPoolRolloutSpec struct {
	// PoolSelector selects MachineConfigPools by their labels.
	PoolSelector *metav1.LabelSelector `json:"poolSelector"`
	// Canary, when set, is the first batch: that many nodes (a count, or a percent of the
	// pool rounded up, at least 1) update first; the rest waits for `mco rollout resume`, or
	// for Soak to pass when Soak is set.
	// +optional
	Canary *Canary `json:"canary,omitempty"`
	// Soak is how long the pool waits after a batch finished before the next one starts.
	// 0 (unset) means no batching: nodes start as maxUnavailable frees slots.
	// +optional
	Soak metav1.Duration `json:"soak,omitempty"`
	// HealthGate is what an updated node must satisfy; one that fails it pauses the pool.
	// +optional
	HealthGate HealthGate `json:"healthGate,omitempty"`
	// MaintenanceWindows, when any, are the only times a new node may start updating. A
	// node that started always finishes, even after its window closed.
	// +optional
	MaintenanceWindows []MaintenanceWindow `json:"maintenanceWindows,omitempty"`
	// Paused stops starting nodes; nodes already started finish.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// OnFailure is what the pool does when a node's update fails (an apply error, a booted
	// config that does not match, a node that reverted itself after a broken boot, a node not
	// back in time, the health gate failing after an update, a canary failing its soak):
	// Pause (the default: start no further node and wait for an admin) or Rollback (undo the
	// rollout: the pool returns to its previous rendered config under the same pacing, as
	// `mco rollout undo` does, and is held there until its MachineConfigs change or
	// `mco rollout resume`).
	// +optional
	OnFailure FailurePolicy `json:"onFailure,omitempty"`
	// NodeBootTimeout is how long a node rebooted for an update has to come back healthy (the
	// kubelet running and healthy, the Node Ready) before it reverts that update itself and
	// reboots into its previous config. Default 10m.
	// +optional
	NodeBootTimeout *metav1.Duration `json:"nodeBootTimeout,omitempty"`
	// Drain says what happens when a node's drain stays blocked (a PodDisruptionBudget, or a
	// pod that cannot be evicted). Unset: keep waiting, as without a policy.
	// +optional
	Drain *DrainPolicy `json:"drain,omitempty"`
}

// FailurePolicy is what a pool does when a node's update fails.
// +kubebuilder:validation:Enum=Pause;Rollback
type FailurePolicy string

const (
	// FailurePause starts no further node and waits for an admin (OpenShift's behaviour).
	FailurePause FailurePolicy = "Pause"
	// FailureRollback undoes the rollout: the pool returns to its previous rendered config.
	FailureRollback FailurePolicy = "Rollback"
)

// DefaultNodeBootTimeout is NodeBootTimeout when unset.
const DefaultNodeBootTimeout = 10 * time.Minute

// DrainBlockedAction is what happens once a drain has been blocked for BlockedTimeout.
// +kubebuilder:validation:Enum=Wait;Skip
type DrainBlockedAction string

const (
	// DrainWait keeps waiting (the default): the DrainBlocked condition and alert stay.
	DrainWait DrainBlockedAction = "Wait"
	// DrainSkip skips the node: it is uncordoned and returned to its current config, the next
	// node is taken (never more than maxUnavailable at once), and the node is tried again
	// after the pool's other nodes.
	DrainSkip DrainBlockedAction = "Skip"
)

// DrainPolicy bounds how long a blocked drain holds a rollout.
type DrainPolicy struct {
	// BlockedTimeout is how long a drain may be blocked before OnBlocked acts. Default 10m.
	// +optional
	BlockedTimeout *metav1.Duration `json:"blockedTimeout,omitempty"`
	// OnBlocked is Wait (the default) or Skip.
	// +optional
	OnBlocked DrainBlockedAction `json:"onBlocked,omitempty"`
	// DeleteBlockingPodsAfter, when set, opts in to deleting the pods whose eviction is
	// refused once a drain of a node has been blocked that long in all (its blocked time
	// counts over every attempt, so with Skip it acts on a later attempt once it exceeds
	// BlockedTimeout). Each deletion is an event and a log line naming the pod and the
	// PodDisruptionBudget it bypassed. Unset: pods are never deleted.
	// +optional
	DeleteBlockingPodsAfter *metav1.Duration `json:"deleteBlockingPodsAfter,omitempty"`
}

// DefaultDrainBlockedTimeout is DrainPolicy.BlockedTimeout when unset.
const DefaultDrainBlockedTimeout = 10 * time.Minute

// Canary is the size of the first batch.
type Canary struct {
	// Nodes is a count ("1") or a percent of the pool ("10%").
	Nodes intstr.IntOrString `json:"nodes"`
}

// HealthGate lists the checks an updated node must pass. Unset checks are on.
type HealthGate struct {
	// NodeReady requires the node's Ready condition to be True (default true).
	// +optional
	NodeReady *bool `json:"nodeReady,omitempty"`
	// DaemonSetPodsReady requires every DaemonSet pod on the node to be Ready (default true).
	// +optional
	DaemonSetPodsReady *bool `json:"daemonSetPodsReady,omitempty"`
}

// Weekday is a day of the week in English three-letter form.
// +kubebuilder:validation:Enum=Mon;Tue;Wed;Thu;Fri;Sat;Sun
type Weekday string

// MaintenanceWindow opens on each of Days at Start (wall clock in TimeZone) for Duration, or
// until End (wall clock, the next day when End is not after Start). Exactly one of Duration
// and End is set.
type MaintenanceWindow struct {
	// Days are the days the window opens on; empty means every day.
	// +optional
	Days []Weekday `json:"days,omitempty"`
	// Start is "HH:MM", 24-hour.
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	Start string `json:"start"`
	// Duration is the window's length in elapsed time (at most 24h).
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
	// End is "HH:MM", wall clock; across a DST change the window is then an hour longer or shorter.
	// +optional
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	End string `json:"end,omitempty"`
	// TimeZone is an IANA zone name such as "Europe/Berlin"; empty means UTC.
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
}

// Phase is where a paced rollout stands.
type Phase string

const (
	PhaseIdle             Phase = "Idle"             // nothing to roll out (or no nodes)
	PhaseCanary           Phase = "Canary"           // the canary batch runs or awaits approval
	PhaseSoaking          Phase = "Soaking"          // a batch finished; waiting for its soak
	PhaseWaitingForWindow Phase = "WaitingForWindow" // ready to start, outside every window
	PhaseProgressing      Phase = "Progressing"      // nodes are starting or updating
	PhasePaused           Phase = "Paused"           // spec.paused, or the health gate failed
	PhaseRolledBack       Phase = "RolledBack"       // held on the previous config after a failed or undone rollout
	PhaseDone             Phase = "Done"             // every node is on the target
)

// MachineConfigPoolRolloutStatus is what the controller last decided, for each selected pool.
type MachineConfigPoolRolloutStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase and Reason summarise the pools: those of the pool furthest from Done (Paused first,
	// then RolledBack, WaitingForWindow, Canary, Soaking, Progressing), so one column says why a
	// rollout waits.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// Reason says why the rollout waits, in words ("pool worker: waiting for window Sat 02:00
	// Europe/Berlin (in 3h12m)").
	// +optional
	Reason string `json:"reason,omitempty"`
	// NextWindowStart is the earliest next window opening among pools waiting for one.
	// +optional
	NextWindowStart *metav1.Time `json:"nextWindowStart,omitempty"`
	// NodesDone and NodesRemaining are summed over the pools.
	// +optional
	NodesDone int32 `json:"nodesDone,omitempty"`
	// +optional
	NodesRemaining int32 `json:"nodesRemaining,omitempty"`
	// Pools is the decision for each selected pool.
	// +optional
	// +listType=map
	// +listMapKey=name
	Pools []PoolRolloutStatus `json:"pools,omitempty"`
	// Conditions: Valid (the spec compiles; its message counts the pools the policy paces). A
	// pool two policies select is refused in both policies' entries for it.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// PoolRolloutStatus is the pacing of one pool towards one rendered config.
type PoolRolloutStatus struct {
	// Name is the MachineConfigPool's name.
	Name string `json:"name"`
	// Target is the rendered config the batches count towards; a new target starts at batch 0.
	// +optional
	Target string `json:"target,omitempty"`
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// Batch is the number of batches started for Target (the canary is batch 1). It is written
	// before the batch's nodes are started, so a restart never counts a batch twice.
	// +optional
	Batch int32 `json:"batch,omitempty"`
	// BatchFinishedAt is when the controller first saw every started node on Target; the
	// soak counts from it.
	// +optional
	BatchFinishedAt *metav1.Time `json:"batchFinishedAt,omitempty"`
	// NextWindowStart is when the next maintenance window opens, while waiting for one.
	// +optional
	NextWindowStart *metav1.Time `json:"nextWindowStart,omitempty"`
	// +optional
	NodesDone int32 `json:"nodesDone,omitempty"`
	// +optional
	NodesRemaining int32 `json:"nodesRemaining,omitempty"`
}
