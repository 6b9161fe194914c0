// Package images is the part of the whole-system tests (test/e2e) about container and OS images
// on the nodes: OpenShift's PinnedImageSets pulled and pinned on real machines, from a registry
// on this host that only the cluster's machines reach, the kubelet's image garbage collection
// keeping what is pinned; and the kubeadm layout's containerd 1.6 refusing to pin. Its clusters
// run on a network slot of their own, beside test/e2e's, test/chaos's and test/e2e/stranded's.
package images
