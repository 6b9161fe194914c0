// Package containerdhosts derives containerd's registry host configuration
// (/etc/containerd/certs.d/<host>/hosts.toml) from the /etc/containers/registries.conf a
// rendered config writes, for nodes whose container runtime is containerd, which never reads
// registries.conf. The rendered config itself stays OpenShift's, byte for byte; the node agent
// calls FromRegistriesConf on the registries.conf it is about to write and writes, verifies and
// reverts the derived files with the rest, after CertsDirConfigured has confirmed that
// containerd reads the directory at all.
//
// Pure: values in, values (or typed errors) out, no I/O. What maps, what is refused and why:
// docs/generated-configs.md, "containerd nodes: registry mirrors".
package containerdhosts
