// Package protocol names the wire contract between mco's components and the tooling written
// for OpenShift: node annotation keys and values, labels, taints and well-known object names.
// The keys are the OpenShift ones on purpose, so `oc`-era scripts keep working.
package protocol

import "strings"

const prefix = "machineconfiguration.openshift.io/"

// Node annotations: the only channel between the controller and the node agent.
const (
	// CurrentConfigAnnotation is written by the agent: the rendered config the node is verified to be in.
	CurrentConfigAnnotation = prefix + "currentConfig"
	// DesiredConfigAnnotation is written by the node controller: the rendered config the node must move to.
	DesiredConfigAnnotation = prefix + "desiredConfig"
	// StateAnnotation is written by the agent; see the NodeState values.
	StateAnnotation = prefix + "state"
	// ReasonAnnotation is the agent's human-readable error for Degraded/Unreconcilable; cleared on Done.
	ReasonAnnotation = prefix + "reason"
	// DesiredDrainAnnotation is written by the agent: DrainRequest or UncordonRequest of a config.
	DesiredDrainAnnotation = prefix + "desiredDrain"
	// LastAppliedDrainAnnotation is written by the drain controller once desiredDrain was carried out.
	LastAppliedDrainAnnotation = prefix + "lastAppliedDrain"
	// FirstPivotConfigAnnotation records the rendered config a node first booted into.
	FirstPivotConfigAnnotation = prefix + "firstPivotConfig"
	// PostConfigActionAnnotation is "Rebooting" while the agent has a reboot queued.
	PostConfigActionAnnotation = prefix + "post-config-action"
	// CustomPoolLabelsAppliedAnnotation (value "") is written by the node controller with the
	// node-selector labels of the custom pool a node first booted into, so they are applied
	// once: an admin who later removes them is not overruled.
	CustomPoolLabelsAppliedAnnotation = prefix + "customPoolLabelsApplied"

	// DrainStartedAtAnnotation (mco only) is written by the drain controller when it cordons a
	// node for a drain request: the RFC 3339 time the drain began. Keeping it on the Node lets
	// the drain's age, and so its backoff and the blocked threshold, survive a controller restart.
	// Removed when the drain is acknowledged.
	DrainStartedAtAnnotation = prefix + "drain-started-at"
	// DrainBlockedAnnotation (mco only) is written by the drain controller once a drain has been
	// stuck longer than its threshold: which pods block it and, for evictions refused by a
	// PodDisruptionBudget, which budget. The node controller turns it into the pool's
	// DrainBlocked condition. Removed when the drain is acknowledged.
	DrainBlockedAnnotation = prefix + "drain-blocked"
	// DrainBlockedSinceAnnotation (mco only) is written by the drain controller when an eviction
	// pass of a running drain is refused (a PodDisruptionBudget) after one that was not: the RFC
	// 3339 time the drain became blocked. When it stops being blocked (a pass without a refusal,
	// the drain acknowledged, or the request withdrawn) the stint is added to
	// rollout.mco.dev/drain-blocked-seconds and this is removed (internal/drainpolicy).
	DrainBlockedSinceAnnotation = prefix + "drain-blocked-since"
)

// NodeState is the value of StateAnnotation.
type NodeState string

const (
	NodeDone           NodeState = "Done"
	NodeWorking        NodeState = "Working"
	NodeDegraded       NodeState = "Degraded"
	NodeUnreconcilable NodeState = "Unreconcilable"
)

// PostConfigActionRebooting is the value of PostConfigActionAnnotation while a reboot is queued.
const PostConfigActionRebooting = "Rebooting"

// CoreUser is the only user a MachineConfig may configure after install, and so the only one
// whose SSH keys and password the agent writes.
const CoreUser = "core"

// MaxReasonLength bounds ReasonAnnotation, like the original, so a huge error cannot bloat the Node.
const MaxReasonLength = 2000

// DrainRequest is the desiredDrain value asking the drain controller to cordon and drain a node
// on its way to config.
func DrainRequest(config string) string { return "drain-" + config }

// UncordonRequest is the desiredDrain value asking the drain controller to uncordon a node that
// reached config.
func UncordonRequest(config string) string { return "uncordon-" + config }

// Labels and annotations on MachineConfigs and pools.
const (
	// RoleLabel is the conventional MachineConfig selector label.
	RoleLabel = prefix + "role"
	// GeneratedByControllerVersionAnnotation marks MachineConfigs a controller generated; such
	// MCs never override the pool's OS image.
	GeneratedByControllerVersionAnnotation = prefix + "generated-by-controller-version"
	// BuiltInPoolLabel marks the pools mco ships.
	BuiltInPoolLabel = prefix + "mco-built-in"
	// RequiredForUpgradeLabel marks pools an upgrade must wait for.
	RequiredForUpgradeLabel = "operator.machineconfiguration.openshift.io/required-for-upgrade"
	// PoolLabelPrefix + pool name is set on each built-in pool.
	PoolLabelPrefix = "pools.operator.machineconfiguration.openshift.io/"
	// EtcdIndexTemplatingAnnotation (mco only), "true" or "false" on a pool: whether
	// /config/<pool>?etcd_index=N executes the pool's contents that refer to the index as
	// templates (seed 003, etcdindex.RefersToIndex). Master templates unless it says "false";
	// any other pool only when it says "true".
	EtcdIndexTemplatingAnnotation = prefix + "etcd-index-templating"
	// NameSuffixAnnotation, on a KubeletConfig or ContainerRuntimeConfig, records which
	// generated MachineConfig name it owns on its pools: "" for 99-<pool>-generated-<kind>, "N"
	// for 99-<pool>-generated-<kind>-N. Written once, by the first sync, so the name stays the
	// same however many such objects come and go.
	NameSuffixAnnotation = prefix + "mc-name-suffix"
)

// Taints and node labels.
const (
	// UpdateInProgressTaintKey is put (PreferNoSchedule) on nodes whose desired config is behind the pool target.
	UpdateInProgressTaintKey = "UpdateInProgress"
	MasterRoleLabel          = "node-role.kubernetes.io/master"
	WorkerRoleLabel          = "node-role.kubernetes.io/worker"
	ControlPlaneRoleLabel    = "node-role.kubernetes.io/control-plane"
)

// Well-known pools and singletons.
const (
	MasterPool = "master"
	WorkerPool = "worker"
	// ArbiterPool is OpenShift's third built-in pool (two-node-plus-arbiter clusters); mco does
	// not ship it but treats it as built-in when an admin creates it.
	ArbiterPool = "arbiter"
	// ClusterMachineConfiguration is the only MachineConfiguration name mco acts on.
	ClusterMachineConfiguration = "cluster"
)

// Machine Config Server credentials and pointer configs.
const (
	// ServerPort is the Machine Config Server's TLS port.
	ServerPort = 22623
	// ServerInsecurePort is its plain HTTP port (OpenShift's, for machines that cannot do TLS
	// to it yet).
	ServerInsecurePort = 22624
	// ServerTokenKey is the key of a pool's bearer token in its token Secret.
	ServerTokenKey = "token"
	// PreviousTokenKey, in a token Secret, is the token being rotated out: it stays valid until
	// PreviousTokenExpiresKey (RFC 3339), so machines booting from pointer configs written
	// before the rotation still get their config.
	PreviousTokenKey        = "previous-token"
	PreviousTokenExpiresKey = "previous-token-expires"
	// ManagedServerTokenLabel (value "") marks the token Secrets the controller creates,
	// rotates and deletes with their pool. A token Secret without it is the admin's and is
	// never touched.
	ManagedServerTokenLabel = prefix + "mcs-token"
	// ServerTokenIssuedAtAnnotation, on a managed token Secret, is when its current token was
	// issued (RFC 3339); rotation is due a fixed time after it.
	ServerTokenIssuedAtAnnotation = prefix + "mcs-token-issued-at"
	// ManagedUserDataLabel (value "") marks the <pool>-user-data-managed Secrets mco owns;
	// installer-made user-data Secrets lack it. OpenShift's key, so its tooling recognises them.
	ManagedUserDataLabel = prefix + "managed-ca-bundle-derived-from-configmap"
	// UserDataKey holds the pointer Ignition in a user-data Secret; DisableTemplatingKey tells
	// the Machine API not to template it.
	UserDataKey          = "userData"
	DisableTemplatingKey = "disableTemplating"
)

// ServerTokenSecretName is the Secret, in the server's namespace, holding pool's bearer tokens.
func ServerTokenSecretName(pool string) string { return pool + serverTokenSuffix }

// IsManagedServerToken reports whether labels mark a token Secret as the controller's own.
func IsManagedServerToken(labels map[string]string) bool {
	_, ok := labels[ManagedServerTokenLabel]
	return ok
}

// PoolOfServerTokenSecret is the pool a token Secret name belongs to.
func PoolOfServerTokenSecret(name string) (string, bool) { return cutPool(name, serverTokenSuffix) }

// IsManagedUserData reports whether labels mark a Secret as mco's own pointer config.
func IsManagedUserData(labels map[string]string) bool {
	_, ok := labels[ManagedUserDataLabel]
	return ok
}

// ManagedUserDataSecretName is the pointer-Ignition Secret mco keeps for pool.
func ManagedUserDataSecretName(pool string) string { return pool + managedUserDataSuffix }

// PoolOfManagedUserDataSecret is the pool a managed user-data Secret name belongs to.
func PoolOfManagedUserDataSecret(name string) (string, bool) {
	return cutPool(name, managedUserDataSuffix)
}

const (
	serverTokenSuffix     = "-mcs-token"
	managedUserDataSuffix = "-user-data-managed"
)

func cutPool(name, suffix string) (string, bool) {
	pool, ok := strings.CutSuffix(name, suffix)
	return pool, ok && pool != ""
}

// Boot image management.
const (
	// StubIgnitionUpgradedToAnnotation, on a user-data Secret, records the spec version the
	// boot image controller upgraded its spec 2 pointer config to; StubIgnitionUpgradedAtAnnotation
	// when (RFC 3339). OpenShift's keys.
	StubIgnitionUpgradedToAnnotation = prefix + "stub-ignition-upgraded-to"
	StubIgnitionUpgradedAtAnnotation = prefix + "stub-ignition-upgraded-at"
)

// Files the Machine Config Server puts into every new machine's config for the node side to
// read: the annotations the agent seeds its Node with, the rendered MachineConfig with an empty
// Ignition config (OS image, kernel arguments, kernel type, extensions, FIPS: the first-boot
// service's input), and the cluster's pull secret (where the kubelet reads it).
const (
	NodeAnnotationsPath    = "/etc/machine-config-daemon/node-annotations.json"
	EncapsulatedConfigPath = "/etc/ignition-machine-config-encapsulated.json"
	PullSecretPath         = "/var/lib/kubelet/config.json"
)
