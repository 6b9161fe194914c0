package install

// The API calls mco's components make, found by reading the code. rbac_test.go checks the
// RBAC in this directory against this table both ways: every call is allowed for its
// component's ServiceAccount (kubectl auth can-i against the test API server, which enforces
// RBAC), and every permission the shipped Roles grant is a call listed here. observed_test.go
// runs the controller, the server and the agent under their ServiceAccounts and fails on any
// request this table does not list.
//
// ADDING AN API CALL? Add its row here (and the rule to config/default/*-rbac.yaml, with a
// comment saying why). Things that make calls without looking like it:
//   - a controller-runtime client's Get/List of a kind goes through the informer cache: the
//     calls are list and watch, not get, in every namespace the cache covers (see cacheOptions
//     in internal/controller/manager.go), and For/Owns/Watches start such an informer too;
//   - record.EventRecorder events about cluster-scoped objects go to namespace "default", and
//     are created, then patched when repeated;
//   - kubectl's drain helper lists pods and gets DaemonSets;
//   - setting blockOwnerDeletion in an ownerReference needs update on the owner's finalizers
//     where OwnerReferencesPermissionEnforcement admission runs (OpenShift).
//   - an informer limited by a metadata.name field selector lists and watches with that name
//     as far as RBAC is concerned, so its row names the object and its rule has resourceNames.
// Namespace "" is a cluster-scoped resource, or a namespaced one in every namespace.

const (
	controller = "controller"
	server     = "server"
	daemon     = "daemon"
)

// serviceAccounts maps each component to its ServiceAccount (in openshift-machine-config-operator).
var serviceAccounts = map[string]string{controller: "mco-controller", server: "mco-server", daemon: "mco-daemon"}

type apiCall struct {
	component   string
	verb        string
	group       string
	resource    string
	subresource string
	namespace   string
	name        string // only when the code uses one fixed name and the rule is limited to it
	by          string // which code makes the call
}

const (
	mcfg = "machineconfiguration.openshift.io"
	// rolloutGroup is mco's own API group (MachineConfigPoolRollout).
	rolloutGroup = "rollout.mco.dev"
	operator     = "operator.openshift.io"
	machine      = "machine.openshift.io"
	config       = "config.openshift.io"
)

var apiCalls = []apiCall{
	// mco controller: render (internal/controller/render)
	{controller, "get", mcfg, "machineconfigpools", "", "", "", "render: Reconcile reads the pool (cache)"},
	{controller, "list", mcfg, "machineconfigpools", "", "", "", "render/node/userdata: pool informer, poolsFor, GC references"},
	{controller, "watch", mcfg, "machineconfigpools", "", "", "", "render/node/userdata: pool informer"},
	{controller, "patch", mcfg, "machineconfigpools", "", "", "", "render: setTarget (spec.configuration); pinnedimageset: populate (spec.pinnedImageSets)"},
	{controller, "patch", mcfg, "machineconfigpools", "status", "", "", "render: writeStatus; node: writeStatus; unpauseplan: write (PendingUpdate); pinnedimageset: Reconcile (poolSynchronizersStatus, PinnedImageSetsDegraded)"},
	{controller, "update", mcfg, "machineconfigpools", "finalizers", "", "", "render/userdata/servertoken: blockOwnerDeletion on rendered MCs and managed Secrets (admission check)"},
	{controller, "list", mcfg, "pinnedimagesets", "", "", "", "pinnedimageset: set informer, Reconcile (cache)"},
	{controller, "watch", mcfg, "pinnedimagesets", "", "", "", "pinnedimageset: set informer"},
	{controller, "get", mcfg, "machineconfigs", "", "", "", "render: ensureRendered reads an existing rendered config; node: the pool owning a node's firstPivotConfig (cache)"},
	{controller, "list", mcfg, "machineconfigs", "", "", "", "render: informer, Reconcile, GC; kubeletconfig: the pools' base kubelet.conf; unpauseplan: rendered configs to plan (cache)"},
	{controller, "watch", mcfg, "machineconfigs", "", "", "", "render/unpauseplan: informer"},
	{controller, "create", mcfg, "machineconfigs", "", "", "", "render: ensureRendered; kubeletconfig: apply"},
	{controller, "update", mcfg, "machineconfigs", "", "", "", "render: ensureRendered restores a hand-edited rendered config; kubeletconfig: apply"},
	{controller, "delete", mcfg, "machineconfigs", "", "", "", "render: collectGarbage; kubeletconfig: prune, finalize"},
	// mco controller: node and drain (internal/controller/node, internal/controller/drain)
	{controller, "get", "", "nodes", "", "", "", "drain: Reconcile reads the node (cache); deleteRefused reads it past the cache before deleting pods"},
	{controller, "list", "", "nodes", "", "", "", "node/drain/unpauseplan: informer; render: GC references"},
	{controller, "watch", "", "nodes", "", "", "", "node/drain/unpauseplan: informer"},
	{controller, "patch", "", "nodes", "", "", "", "node: desiredConfig + UpdateInProgress taint, a custom pool's labels + customPoolLabelsApplied on a node that booted into it; drain: cordon, uncordon, drain annotations"},
	{controller, "get", mcfg, "machineconfignodes", "", "", "", "machineconfignode: Reconcile reads an object whose spec it has not seen (API reader)"},
	{controller, "list", mcfg, "machineconfignodes", "", "", "", "machineconfignode: informer, Reconcile (cache)"},
	{controller, "watch", mcfg, "machineconfignodes", "", "", "", "machineconfignode: informer"},
	{controller, "create", mcfg, "machineconfignodes", "", "", "", "machineconfignode: Reconcile creates a Node's object"},
	{controller, "patch", mcfg, "machineconfignodes", "", "", "", "machineconfignode: Reconcile merge-patches spec and owner"},
	{controller, "delete", mcfg, "machineconfignodes", "", "", "", "machineconfignode: Reconcile deletes the object of a Node without pool or gone"},
	{controller, "list", "", "pods", "", "", "", "drain: kubectl drain GetPodsForDeletion (field selector spec.nodeName); node: DaemonSet pod informer (pacing health gate)"},
	{controller, "watch", "", "pods", "", "", "", "node: DaemonSet pod informer (pacing health gate)"},
	{controller, "list", rolloutGroup, "machineconfigpoolrollouts", "", "", "", "node, pacing: policy informer, Reconcile (cache)"},
	{controller, "watch", rolloutGroup, "machineconfigpoolrollouts", "", "", "", "node, pacing: policy informer"},
	{controller, "update", rolloutGroup, "machineconfigpoolrollouts", "status", "", "", "node: each pool's pacing entry (batch before its nodes start); pacing: Valid condition, entries of pools gone"},
	{controller, "create", "", "pods", "eviction", "", "", "drain: kubectl drain EvictPod"},
	{controller, "delete", "", "pods", "", "", "", "drain: deleteRefused (spec.drain.deleteBlockingPodsAfter, opt-in)"},
	{controller, "get", "apps", "daemonsets", "", "", "", "drain: kubectl drain daemonSetFilter"},
	{controller, "list", "policy", "poddisruptionbudgets", "", "", "", "drain: budgetsCovering after a 429"},
	// mco controller: user-data (internal/controller/userdata), with --server-host
	{controller, "list", "", "secrets", "", mapiNS, "", "userdata: Secret informer (managed and installer user-data); bootimage: MachineSet user-data (cache)"},
	{controller, "watch", "", "secrets", "", mapiNS, "", "userdata: Secret informer"},
	{controller, "create", "", "secrets", "", mapiNS, "", "userdata: <pool>-user-data-managed"},
	{controller, "update", "", "secrets", "", mapiNS, "", "userdata: managed Secret, installer CA rotation; bootimage: stub upgrade"},
	{controller, "delete", "", "secrets", "", mapiNS, "", "userdata: deleteManaged for a deleted pool"},
	{controller, "list", "", "secrets", "", mcoNS, "", "servertoken, userdata: <pool>-mcs-token (cache); servingcert: its CA and serving Secrets (cache); the Secret informer covers every cached namespace"},
	{controller, "watch", "", "secrets", "", mcoNS, "", "servertoken, userdata, servingcert: Secret informer"},
	// mco controller: server tokens (internal/controller/servertoken) and, with --server-host or
	// --server-cert-names, the serving certificate (internal/controller/servingcert)
	{controller, "create", "", "secrets", "", mcoNS, "", "servertoken: create <pool>-mcs-token; servingcert: writeSecret creates machine-config-server-ca-key, machine-config-server-tls; metricscert: mco-metrics-ca-key, mco-metrics-tls"},
	{controller, "update", "", "secrets", "", mcoNS, "", "servertoken: update (rotation, repair); servingcert: writeSecret (renewal, CA rotation)"},
	{controller, "delete", "", "secrets", "", mcoNS, "", "servertoken: deleteManaged for a deleted pool"},
	{controller, "list", "", "configmaps", "", mcoNS, "", "userdata: CA bundle machine-config-server-ca (cache); servingcert: the bundle it keeps; bootimage: coreos-bootimages"},
	{controller, "watch", "", "configmaps", "", mcoNS, "", "userdata, servingcert, bootimage: ConfigMap informer"},
	{controller, "list", "", "configmaps", "", mapiNS, "", "userdata/bootimage: the ConfigMap informer covers every cached namespace"},
	{controller, "watch", "", "configmaps", "", mapiNS, "", "userdata/bootimage: the ConfigMap informer covers every cached namespace"},
	// mco controller: boot images (internal/controller/bootimage)
	{controller, "get", operator, "machineconfigurations", "", "", "", "bootimage: Reconcile (cache)"},
	{controller, "list", operator, "machineconfigurations", "", "", "", "bootimage/unpauseplan: informer (unpauseplan: NodeDisruptionPolicy)"},
	{controller, "watch", operator, "machineconfigurations", "", "", "", "bootimage/unpauseplan: informer"},
	{controller, "patch", operator, "machineconfigurations", "status", "", "", "bootimage: writeStatus"},
	// mco controller: ClusterOperator machine-config (internal/controller/clusteroperator), where
	// the cluster serves the kind; the cache reads it by name (cacheOptions in manager.go).
	{controller, "list", config, "clusteroperators", "", "", "machine-config", "clusteroperator: informer on metadata.name=machine-config"},
	{controller, "watch", config, "clusteroperators", "", "", "machine-config", "clusteroperator: informer"},
	{controller, "create", config, "clusteroperators", "", "", "", "clusteroperator: Reconcile creates machine-config when absent"},
	{controller, "update", config, "clusteroperators", "status", "", "machine-config", "clusteroperator: Reconcile writes the status"},
	{controller, "list", mcfg, "kubeletconfigs", "", "", "", "clusteroperator: informer (fleet evaluation failSwapOn); kubeletconfig: informer, uncached list for name suffixes"},
	{controller, "watch", mcfg, "kubeletconfigs", "", "", "", "clusteroperator, kubeletconfig: informer"},
	{controller, "list", mcfg, "containerruntimeconfigs", "", "", "", "clusteroperator: informer (fleet evaluation runc)"},
	{controller, "watch", mcfg, "containerruntimeconfigs", "", "", "", "clusteroperator: informer"},
	// mco controller: KubeletConfigs (internal/controller/kubeletconfig). Besides these it reads
	// pools and MachineConfigs and writes 99-<pool>-generated-kubelet[-N] (machineconfigs rows).
	{controller, "patch", mcfg, "kubeletconfigs", "", "", "", "kubeletconfig: ensureMetadata (suffix annotation, finalizers), dropFinalizers"},
	{controller, "patch", mcfg, "kubeletconfigs", "status", "", "", "kubeletconfig: writeStatus"},
	{controller, "update", mcfg, "kubeletconfigs", "finalizers", "", "", "kubeletconfig: blockOwnerDeletion on generated MachineConfigs (admission check)"},
	// Where the cluster serves APIServers; the cache reads `cluster` only (cacheOptions in manager.go).
	{controller, "list", config, "apiservers", "", "", "cluster", "kubeletconfig: informer on metadata.name=cluster (TLS profile)"},
	{controller, "watch", config, "apiservers", "", "", "cluster", "kubeletconfig: informer"},
	// mco controller: ContainerRuntimeConfigs and registries (internal/controller/containerruntime,
	// internal/controller/registries). Besides these they read pools and MachineConfigs and write
	// 99-<pool>-generated-containerruntime[-N] and 99-<pool>-generated-registries (machineconfigs
	// rows); the containerruntimeconfigs list/watch rows above serve their informer and the
	// uncached list for name suffixes too.
	{controller, "patch", mcfg, "containerruntimeconfigs", "", "", "", "containerruntimeconfig: ensureMetadata (suffix annotation, finalizers), dropFinalizers"},
	{controller, "patch", mcfg, "containerruntimeconfigs", "status", "", "", "containerruntimeconfig: writeStatus"},
	{controller, "update", mcfg, "containerruntimeconfigs", "finalizers", "", "", "containerruntimeconfig: blockOwnerDeletion on generated MachineConfigs (admission check)"},
	{controller, "list", config, "images", "", "", "", "registries: informer (image.config cluster)"},
	{controller, "watch", config, "images", "", "", "", "registries: informer"},
	{controller, "list", config, "imagedigestmirrorsets", "", "", "", "registries: informer"},
	{controller, "watch", config, "imagedigestmirrorsets", "", "", "", "registries: informer"},
	{controller, "list", config, "imagetagmirrorsets", "", "", "", "registries: informer"},
	{controller, "watch", config, "imagetagmirrorsets", "", "", "", "registries: informer"},
	{controller, "list", operator, "imagecontentsourcepolicies", "", "", "", "registries: informer"},
	{controller, "watch", operator, "imagecontentsourcepolicies", "", "", "", "registries: informer"},
	{controller, "get", config, "clusterversions", "", "", "version", "registries: cluster reads the release image uncached, where the kind is served"},
	// cacheOptions limits the MachineSet informer to --machine-api-namespace (sync lists
	// InNamespace from the cache).
	{controller, "list", machine, "machinesets", "", mapiNS, "", "bootimage: informer, sync"},
	{controller, "watch", machine, "machinesets", "", mapiNS, "", "bootimage: informer"},
	{controller, "patch", machine, "machinesets", "", mapiNS, "", "bootimage: reconcileMachineSet (providerSpec)"},
	{controller, "create", "", "configmaps", "", mcoNS, "", "bootimage: saveHistory; servingcert: the CA bundle machine-config-server-ca"},
	{controller, "update", "", "configmaps", "", mcoNS, "machine-config-server-ca", "servingcert: writeConfigMap (a CA joins or leaves the bundle)"},
	{controller, "update", "", "configmaps", "", mcoNS, "mco-metrics-ca", "metricscert (servingcert with MetricsObjects): writeConfigMap"},
	// metrics off loopback (internal/metricsauth's Reviewer, through controller-runtime's
	// metrics server): each scraper's token and its right to get /metrics
	{controller, "create", "authentication.k8s.io", "tokenreviews", "", "", "", "metrics: Reviewer.review"},
	{controller, "create", "authorization.k8s.io", "subjectaccessreviews", "", "", "", "metrics: Reviewer.review"},
	{controller, "update", "", "configmaps", "", mcoNS, "machine-set-boot-image-history", "bootimage: saveHistory"},
	// mco controller: leader election and events
	{controller, "create", "coordination.k8s.io", "leases", "", mcoNS, "", "leader election: first start"},
	{controller, "get", "coordination.k8s.io", "leases", "", mcoNS, "mco-controller", "leader election"},
	{controller, "update", "coordination.k8s.io", "leases", "", mcoNS, "mco-controller", "leader election: renew"},
	{controller, "create", "", "events", "", mcoNS, "", "leader election: events on the Lease; servingcert: on its Secrets and ConfigMap"},
	{controller, "patch", "", "events", "", mcoNS, "", "leader election: repeated events"},
	{controller, "create", "", "events", "", "default", "", "render/node/drain/userdata/servertoken/bootimage/clusteroperator: events on pools, Nodes, MachineConfiguration, ClusterOperator"},
	{controller, "patch", "", "events", "", "default", "", "repeated events"},
	{controller, "create", "", "events", "", mapiNS, "", "userdata: events on installer Secrets; bootimage: on MachineSets"},
	{controller, "patch", "", "events", "", mapiNS, "", "repeated events"},

	// mco server, cluster mode (internal/server/cluster.go): informers only
	{server, "list", mcfg, "machineconfigpools", "", "", "", "RunCluster informer"},
	{server, "watch", mcfg, "machineconfigpools", "", "", "", "RunCluster informer"},
	{server, "list", mcfg, "machineconfigs", "", "", "", "RunCluster informer"},
	{server, "watch", mcfg, "machineconfigs", "", "", "", "RunCluster informer"},
	{server, "list", mcfg, "controllerconfigs", "", "", "", "RunCluster informer (kubelet CA)"},
	{server, "watch", mcfg, "controllerconfigs", "", "", "", "RunCluster informer"},
	{server, "list", "", "secrets", "", mcoNS, "", "token Secrets, bootstrap token (informer in --namespace)"},
	{server, "watch", "", "secrets", "", mcoNS, "", "informer in --namespace"},
	{server, "list", "", "configmaps", "", mcoNS, "", "kubeconfig-data (informer in --namespace)"},
	{server, "watch", "", "configmaps", "", mcoNS, "", "informer in --namespace"},
	{server, "list", "", "secrets", "", ocNS, "pull-secret", "pull secret (informer on metadata.name=pull-secret, --pull-secret)"},
	{server, "watch", "", "secrets", "", ocNS, "pull-secret", "pull secret informer"},
	{server, "create", "authentication.k8s.io", "tokenreviews", "", "", "", "metrics off loopback (metricsauth Reviewer, Settings.metricsGuard)"},
	{server, "create", "authorization.k8s.io", "subjectaccessreviews", "", "", "", "metrics off loopback (metricsauth Reviewer)"},

	// mco daemon (internal/daemon/kube.go)
	{daemon, "list", "", "nodes", "", "", "", "newCluster: informer on metadata.name=<node>"},
	{daemon, "watch", "", "nodes", "", "", "", "newCluster: informer on metadata.name=<node>"},
	{daemon, "patch", "", "nodes", "", "", "", "patchAnnotations (merge patch of its own annotations), requestDrain (JSON patch testing desiredConfig)"},
	{daemon, "get", "", "nodes", "", "", "", "fetchNode: its own Node past the informer, before an update's first write (supersede.go)"},
	{daemon, "get", mcfg, "machineconfigs", "", "", "", "machineConfig: current and desired rendered configs"},
	{daemon, "get", operator, "machineconfigurations", "", "", "cluster", "policies: node disruption policy"},
	{daemon, "get", mcfg, "machineconfignodes", "", "", "", "machineConfigNode: its own, before its first status write and when its spec is newer"},
	{daemon, "patch", mcfg, "machineconfignodes", "status", "", "", "patchMachineConfigNodeStatus: its own (daemon-mcn-policy.yaml)"},
	{daemon, "list", rolloutGroup, "machineconfigpoolrollouts", "", "", "", "nodeBootTimeout: arming the boot guard before an update's reboot"},
	{daemon, "list", mcfg, "machineconfigpools", "", "", "", "pinImages: pool informer (the pool of this node, its spec.pinnedImageSets)"},
	{daemon, "watch", mcfg, "machineconfigpools", "", "", "", "pinImages: pool informer"},
	{daemon, "list", mcfg, "pinnedimagesets", "", "", "", "pinImages: set informer (and the probe whether the kind exists)"},
	{daemon, "watch", mcfg, "pinnedimagesets", "", "", "", "pinImages: set informer"},
	{daemon, "create", "authentication.k8s.io", "tokenreviews", "", "", "", "metrics off loopback (metricsauth Reviewer, ServeMetrics)"},
	{daemon, "create", "authorization.k8s.io", "subjectaccessreviews", "", "", "", "metrics off loopback (metricsauth Reviewer)"},
	{daemon, "create", "", "events", "", "default", "", "event: on its Node"},
	{daemon, "patch", "", "events", "", "default", "", "event: repeated"},
	{daemon, "get", "", "namespaces", "", "", mcoNS, "uninstalled (serverguard.go): its namespace, as it stops"},
	{daemon, "get", "apps", "daemonsets", "", mcoNS, "mco-daemon", "uninstalled (serverguard.go): its DaemonSet, as it stops"},
}

// forbidden are calls a component must never be able to make, whatever the table says.
var forbidden = []apiCall{
	{component: controller, verb: "delete", resource: "nodes"},
	{component: controller, verb: "create", resource: "nodes"},
	{component: controller, verb: "update", resource: "nodes", subresource: "status"},
	{component: controller, verb: "create", resource: "pods"},
	{component: controller, verb: "get", resource: "secrets", namespace: "kube-system"},
	{component: controller, verb: "list", resource: "secrets"},
	{component: controller, verb: "create", resource: "secrets", namespace: ocNS},
	{component: controller, verb: "delete", resource: "secrets", namespace: "kube-system"},
	{component: controller, verb: "delete", group: mcfg, resource: "machineconfigpools"},
	{component: controller, verb: "patch", group: mcfg, resource: "machineconfignodes", subresource: "status"},
	{component: controller, verb: "update", group: "apps", resource: "daemonsets", namespace: mcoNS},
	{component: controller, verb: "update", resource: "configmaps", namespace: mcoNS, name: "coreos-bootimages"},
	{component: controller, verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterrolebindings"},
	{component: controller, verb: "escalate", group: "rbac.authorization.k8s.io", resource: "clusterroles"},
	{component: controller, verb: "impersonate", resource: "users"},
	{component: controller, verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: "kube-system"},
	{component: controller, verb: "patch", group: machine, resource: "machinesets", namespace: "default"},
	{component: controller, verb: "update", group: config, resource: "clusteroperators", subresource: "status", name: "kube-apiserver"},
	{component: controller, verb: "get", group: config, resource: "clusteroperators", name: "kube-apiserver"},
	{component: controller, verb: "delete", group: config, resource: "clusteroperators", name: "machine-config"},
	{component: controller, verb: "delete", group: mcfg, resource: "kubeletconfigs"},
	{component: controller, verb: "update", group: mcfg, resource: "kubeletconfigs"},
	{component: controller, verb: "patch", group: config, resource: "apiservers", name: "cluster"},
	{component: controller, verb: "list", group: config, resource: "apiservers"},
	{component: controller, verb: "delete", group: mcfg, resource: "containerruntimeconfigs"},
	{component: controller, verb: "update", group: mcfg, resource: "containerruntimeconfigs"},
	{component: controller, verb: "create", group: config, resource: "imagedigestmirrorsets"},
	{component: controller, verb: "patch", group: config, resource: "images", name: "cluster"},
	{component: controller, verb: "delete", group: operator, resource: "imagecontentsourcepolicies"},
	{component: controller, verb: "update", group: config, resource: "clusterversions", subresource: "status", name: "version"},
	{component: controller, verb: "list", group: config, resource: "clusterversions"},
	{component: controller, verb: "list", group: machine, resource: "machinesets"},
	{component: controller, verb: "watch", group: machine, resource: "machinesets", namespace: "default"},

	{component: server, verb: "create", group: mcfg, resource: "machineconfigs"},
	{component: server, verb: "patch", group: mcfg, resource: "machineconfigpools"},
	{component: server, verb: "patch", group: mcfg, resource: "machineconfigpools", subresource: "status"},
	{component: server, verb: "update", resource: "secrets", namespace: mcoNS},
	{component: server, verb: "delete", resource: "configmaps", namespace: mcoNS},
	{component: server, verb: "get", resource: "secrets", namespace: "kube-system"},
	{component: server, verb: "list", resource: "secrets"},
	{component: server, verb: "list", resource: "secrets", namespace: ocNS},
	{component: server, verb: "get", resource: "secrets", namespace: ocNS, name: "pull-secret"},
	{component: server, verb: "watch", resource: "secrets", namespace: ocNS, name: "etcd-client"},
	{component: server, verb: "create", resource: "events", namespace: "default"},
	{component: server, verb: "patch", resource: "nodes"},
	{component: server, verb: "list", resource: "nodes"},

	{component: daemon, verb: "delete", resource: "nodes"},
	{component: daemon, verb: "create", resource: "nodes"},
	{component: daemon, verb: "update", resource: "nodes"},
	{component: daemon, verb: "patch", resource: "nodes", subresource: "status"},
	{component: daemon, verb: "get", resource: "secrets", namespace: mcoNS},
	{component: daemon, verb: "list", resource: "secrets"},
	{component: daemon, verb: "list", resource: "pods"},
	{component: daemon, verb: "create", resource: "pods", subresource: "eviction"},
	{component: daemon, verb: "update", group: mcfg, resource: "machineconfigs"},
	{component: daemon, verb: "list", group: mcfg, resource: "machineconfigs"},
	{component: daemon, verb: "patch", group: mcfg, resource: "machineconfigpools"},
	{component: daemon, verb: "patch", group: mcfg, resource: "machineconfignodes"},
	{component: daemon, verb: "create", group: mcfg, resource: "machineconfignodes"},
	{component: daemon, verb: "delete", group: mcfg, resource: "machineconfignodes"},
	{component: daemon, verb: "list", group: mcfg, resource: "machineconfignodes"},
	{component: daemon, verb: "get", group: operator, resource: "machineconfigurations", name: "other"},
	{component: daemon, verb: "update", group: operator, resource: "machineconfigurations", name: "cluster"},
}
