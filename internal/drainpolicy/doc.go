// Package drainpolicy is the pure core of MachineConfigPoolRollout spec.drain: how long a node's
// drain has been blocked (its bookkeeping on the Node), and, from the policy and that time, the
// step the blocked drain is on and when the next one comes: keep waiting, skip the node (the
// node controller returns it to its current config), or delete the pods whose eviction is
// refused (the drain controller, opt-in). It does no I/O and reads the time only from its
// arguments, so every rule is table-tested.
package drainpolicy
