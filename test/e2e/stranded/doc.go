// Package stranded is the part of the whole-system tests (test/e2e) about nodes never left
// stranded: a held node, a drain a PodDisruptionBudget blocks, a rollout undone, a config that
// breaks the kubelet at boot, and mco upgrading itself in the middle of a rollout. Its clusters
// run on a network slot of their own, beside test/e2e's and test/chaos's.
package stranded
