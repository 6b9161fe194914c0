// Package drain is the drain controller: it carries out the drain and uncordon requests the node
// agent writes in the desiredDrain annotation and acknowledges each in lastAppliedDrain.
//
// It never blocks a worker on a drain. Each reconcile cordons the node, asks once for the
// eviction of every pod still on it (internal/eviction decides which: kubectl's drain filter as
// OpenShift runs it, DaemonSet and mirror pods stay, emptyDir data goes, unmanaged pods go; each
// pod's own grace period), and either acknowledges
// (no pods left) or requeues with a backoff that grows with the drain's age. The drain's start
// time is a Node annotation, so the age, the backoff and the blocked threshold survive a
// restart. A drain stuck longer than the threshold is reported on the Node (annotation, which the
// node controller turns into the pool's DrainBlocked condition, and a Warning event) naming each
// pod and the PodDisruptionBudget refusing its eviction, and in the mcc_drain_err metric.
package drain
