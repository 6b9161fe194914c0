// Package statusview turns pools and nodes into what an admin reads: the tables of `mco status`
// and the live frame of `mco rollout status`. Pure functions over API objects; the commands only
// fetch and print.
package statusview
