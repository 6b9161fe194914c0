// Package eviction is the pure core of what a drain does with each pod on its node and what the
// API server answers when asked to evict one. The drain controller evicts by it, and `mco
// explain` predicts from it what a running drain waits for, so the two never disagree.
//
// Which pods go follows kubectl's drain filter with the flags OpenShift's MCO drains with
// (--force, --ignore-daemonsets, --delete-emptydir-data); which PodDisruptionBudgets refuse an
// eviction follows the API server's eviction subresource.
package eviction
