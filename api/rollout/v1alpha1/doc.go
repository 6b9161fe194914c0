// Package v1alpha1 is mco's own API group rollout.mco.dev: the MachineConfigPoolRollout policy
// that paces a pool's rollout (canary, soak, health gate, maintenance windows). OpenShift's
// machineconfiguration.openshift.io CRDs stay untouched; pacing is a separate object that
// selects pools.
//
// Layout: API types live in api/<group>/<version> at the module root rather than under
// internal/, because they are the one part of mco other programs may import (clients,
// policy generators, tests in other modules); internal/ would forbid that. Everything that
// decides lives in internal/pacing, which imports this package; this package imports nothing
// of mco.
//
// DeepCopy is hand-written (deepcopy.go) in this first slice; the CRD is not installed yet.
//
// +groupName=rollout.mco.dev
package v1alpha1
