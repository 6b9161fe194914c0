// Package rolloutcli is what the admin's commands that steer rollouts do against a cluster:
// `mco rollout status` follows one, `resume` ends a hold, `undo` writes a rollback, `mco hold`
// keeps nodes back, `mco adopt` approves adoptions, `mco node retry` asks for another try. Each
// reads the cluster, decides with a pure core (internal/statusview, internal/changeplan,
// internal/rollback), writes the one annotation it writes, and prints; the commands only parse
// their flags and arguments.
package rolloutcli
