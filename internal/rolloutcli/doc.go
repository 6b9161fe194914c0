// Package rolloutcli is what `mco rollout status`, `resume` and `undo` do against a cluster:
// read it, decide with the pure cores (internal/statusview, internal/changeplan,
// internal/rollback), write the one annotation each command writes, and print. The commands
// only parse their flags and arguments.
package rolloutcli
