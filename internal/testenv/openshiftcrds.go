package testenv

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/mco-dev/mco/internal/scheme"
)

// ClusterOperatorCRD is OpenShift's ClusterOperator CRD in github.com/openshift/api. mco never
// installs it (OpenShift's cluster-version operator does, and its presence is how mco knows it
// runs on OpenShift); tests that play OpenShift install it with InstallOpenShiftCRDs.
const ClusterOperatorCRD = "config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusteroperators.crd.yaml"

// APIServerCRD is OpenShift's apiservers.config.openshift.io, whose `cluster` TLS profile the
// kubelet config controller follows where it is served.
const APIServerCRD = "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_apiservers-Default.crd.yaml"

// ClusterVersionCRD is OpenShift's clusterversions.config.openshift.io (installed there by the
// cluster-version operator, never by mco); the registries controller reads the release image of
// ClusterVersion `version` where the kind is served.
const ClusterVersionCRD = "config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml"

// OpenShiftCRDs returns install options for CRDs of the pinned github.com/openshift/api that
// config/crd does not hold, by their paths in that module; envtest.InstallCRDs and
// envtest.UninstallCRDs take them.
func OpenShiftCRDs(paths ...string) (envtest.CRDInstallOptions, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/openshift/api")
	cmd.Dir = RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return envtest.CRDInstallOptions{}, fmt.Errorf("locating github.com/openshift/api: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	opts := envtest.CRDInstallOptions{Scheme: scheme.Scheme, ErrorIfPathMissing: true}
	for _, p := range paths {
		opts.Paths = append(opts.Paths, filepath.Join(dir, p))
	}
	return opts, nil
}

// InstallOpenShiftCRDs installs CRDs of the pinned github.com/openshift/api (see OpenShiftCRDs)
// and waits until the API server serves them.
func InstallOpenShiftCRDs(cfg *rest.Config, paths ...string) error {
	opts, err := OpenShiftCRDs(paths...)
	if err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(cfg, opts); err != nil {
		return fmt.Errorf("installing %s: %w", strings.Join(paths, ", "), err)
	}
	return nil
}
