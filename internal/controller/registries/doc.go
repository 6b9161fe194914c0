// Package registries is the image registries controller: from the ImageDigestMirrorSets,
// ImageTagMirrorSets, ImageContentSourcePolicies, image.config.openshift.io/cluster and (where
// OpenShift serves it) ClusterVersion's release image, it keeps 99-<pool>-generated-registries
// on every built-in pool (internal/registries decides the contents, byte for byte OpenShift's).
// A refused input changes nothing and is reported as a Warning event on the object at fault;
// with no image config and no mirror set the MachineConfigs are removed, which restores the
// pools' own registries.conf and policy.json.
package registries
