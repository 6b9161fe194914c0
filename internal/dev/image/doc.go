// Package image assembles mco's container image without a container engine or a registry:
// Debian's files for what the node agent needs in its pod (systemctl for offline enablement,
// chroot, CA certificates), from .deb packages pinned in a lock file, plus mco (without the dev harness), mco-node and mco-server,
// written as a docker-archive tarball that `ctr images import`, `docker load` and `podman load`
// read. It is the registry-less twin of the repository's Containerfile; `make image` runs it
// (hack/image). It also writes the pod sandbox image dev machines' containerd imports
// (WritePause: the pause program `make tools` builds, tagged PauseRef).
//
// Reproducible: the same lock, binaries and epoch give the same image digest (every file owned
// by root, stamped with the epoch, in sorted order; the config's creation time is the epoch).
//
// Debian's mirrors keep only current versions, so the lock goes stale whenever Debian publishes a
// point release or security update of a pinned package: Fetch then returns a *StaleLockError
// naming the packages the mirror no longer has. `make image` fails with it (run `make
// image-lock`: a build is reproducible only from the committed lock); TestImage instead logs that
// hack/image/debian.lock must be refreshed and runs every check on a lock resolved then into a
// temp dir by `make image-lock`'s code (WriteResolved), so CI does not fail for a change
// in Debian, unless MCO_IMAGE_LOCK_STRICT=1. Any other fetch failure fails both.
package image
