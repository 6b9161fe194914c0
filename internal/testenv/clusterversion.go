package testenv

// ClusterVersionCRD is OpenShift's clusterversions.config.openshift.io (installed there by the
// cluster-version operator, never by mco); the registries controller reads the release image of
// ClusterVersion `version` where the kind is served. Install it with InstallOpenShiftCRDs.
const ClusterVersionCRD = "config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml"
