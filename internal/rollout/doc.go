// Package rollout is the pure core of the node controller: given a pool, the nodes in the
// cluster and the time, it decides which pool manages each node, which nodes to point at the
// pool's target next, and what the pool's status says. It does no I/O, so every rule is covered
// by table tests; internal/controller/node only reads, calls it and writes the difference.
//
// The rules follow OpenShift's node controller (same annotations, same counts, same condition
// messages) with the differences recorded in docs/architecture.md.
package rollout
