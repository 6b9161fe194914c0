// Package planview writes the plans internal/changeplan makes for people: `mco plan --offline`'s
// verdict table with its causes, kernel arguments, fields and diffs; a live plan's table of
// pools and groups of nodes, then each group's plan and each adoption's; and `mco rollout
// undo`'s plan and outcome.
package planview
