// Package operatorstatus computes the status of ClusterOperator `machine-config`, which
// OpenShift's cluster-version operator, `oc get co`, must-gather and upgrade tooling read. It is
// a pure function of the pools, MachineConfiguration `cluster`, the KubeletConfigs and
// ContainerRuntimeConfigs and the status already written; internal/controller/clusteroperator
// reads those and writes the result (only on OpenShift, where the kind is served).
//
// The conditions, reasons and message forms are OpenShift's operator's:
//
//   - Available: always True (AsExpected), "Cluster has deployed <versions>": nothing mco gets
//     wrong needs a midnight page, so failures are Degraded, never Available=False.
//   - Degraded: MachineConfigurationFailed when the boot image controller reports
//     BootImageUpdateDegraded; else RequiredPoolsFailed when a pool is Degraded (each degraded
//     pool named) or a required pool is paused with an update pending. "Failed to resync <ver>
//     because: ..." or, during an upgrade, "Unable to apply <ver>: ...".
//   - Progressing: True "Working towards <ver>" (or "Unable to apply <ver>" when degraded) until
//     the new version is reported; otherwise False "Cluster version is <ver>" (or "Error while
//     reconciling <ver>" when degraded). mco also reports True while a pool rolls out
//     (MachineConfigPoolsUpdating, naming each pool), which OpenShift's operator does not.
//   - Upgradeable: False (DegradedPool) while any pool is Degraded, else True (AsExpected).
//   - EvaluationConditionsDetected: True when a KubeletConfig sets failSwapOn false or a
//     ContainerRuntimeConfig picks runc (the reason lists them), else False (AsExpected).
//
// The upgrade rule: status.versions names the new operator version only once every pool
// labelled required-for-upgrade (master) is Updated on a rendered config this controller
// version rendered (and that config's generated sources too), and nothing is degraded. Until
// then the old versions stay and Progressing says "Working towards <ver>".
//
// status.extension carries one line per pool and, while a required pool is not there yet or
// something is degraded, lastSyncError, as OpenShift's operator writes them. Transition times
// move only when a condition's status flips, and a status equal to the one written is
// reported unchanged, so the controller writes nothing.
package operatorstatus
