// Package image assembles mco's container image without a container engine or a registry:
// Debian's files for what the node agent needs in its pod (systemctl for offline enablement,
// chroot, CA certificates), from .deb packages pinned in a lock file, plus mco and mco-node,
// written as a docker-archive tarball that `ctr images import`, `docker load` and `podman load`
// read. It is the registry-less twin of the repository's Containerfile; `make image` runs it
// (hack/image).
//
// Reproducible: the same lock, binaries and epoch give the same image digest (every file owned
// by root, stamped with the epoch, in sorted order; the config's creation time is the epoch).
package image
