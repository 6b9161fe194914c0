// Package pinnedimages is the pure core of OpenShift's PinnedImageSet as mco implements it:
// which sets a pool has (a set whose labels match the pool's machineConfigSelector, as
// OpenShift's pinned image set controller decides), what a node must pull and pin for them, the
// disk guard before any pull, the MachineConfigNode's report (status.pinnedImageSets and the
// PinnedImageSetsProgressing / PinnedImageSetsDegraded conditions), the pool's
// (status.poolSynchronizersStatus and PinnedImageSetsDegraded), and CRI-O's pinning drop-in.
//
// The controller (internal/controller/pinnedimageset) and the node agent
// (internal/daemon/imagepin) only read, call these, and write.
package pinnedimages
