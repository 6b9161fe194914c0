// Package rollback is the pure core of a pool rollback (issue 34, section 2): a pool held on an
// earlier rendered config instead of its newest render, by `mco rollout undo` or by a
// MachineConfigPoolRollout's spec.onFailure: Rollback.
//
// The hold lives in the pool's rollout.mco.dev/rollback annotation (rolloutv1.Rollback). The
// render controller reads it (Hold) and points spec.configuration at Rollback.To while the
// pool's newest render is Rollback.From; the node controller then moves the nodes back through
// the normal update path. The MachineConfigs stay as the admin wrote them, so a new render (they
// changed) ends the hold, as does `mco rollout resume`. The node controller records, when a
// rollout completes, the config the pool ran before (History), which is what an undo after a
// completed rollout returns to (UndoTarget); and, under spec.onFailure: Rollback, writes the
// annotation itself when a node's update fails (OnFailure). Garbage collection keeps every
// rendered config an undo needs (Needed).
package rollback
