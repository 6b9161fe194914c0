// Package registries is the pure core of the registries controller: it merges the cluster's
// ImageDigestMirrorSets, ImageTagMirrorSets, legacy ImageContentSourcePolicies and
// image.config.openshift.io/cluster (insecure, blocked, allowed and search registries) into
// /etc/containers/registries.conf, policy.json and the search-registries drop-in of
// 99-<pool>-generated-registries, byte for byte as OpenShift's container runtime config
// controller writes them for the same inputs, with its validation (each refusal naming the
// object and field). The bases come from the pool's own MachineConfigs, else built-in defaults
// (docs/generated-configs.md).
//
// registries.conf is edited by the libraries OpenShift uses, at the versions it vendors
// (github.com/openshift/runtime-utils, containers/image's sysregistriesv2, BurntSushi/toml);
// policy.json has types of its own (see policy.go for why).
package registries
