// Package crd embeds the CustomResourceDefinitions mco installs (copied verbatim from
// github.com/openshift/api by `make crds`), so `mco dev up` and installers need no checkout.
package crd

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	crdmco "github.com/mco-dev/mco/config/crd-mco"
)

//go:embed *.yaml
var manifests embed.FS

// ShortNames are the names mco adds to the copies, its one change to them: OpenShift gives
// MachineConfigNode none (`oc get machineconfignode`), and `kubectl get mcn` is how the docs
// have admins look at their nodes. All adds them; Kustomization patches in the same for
// config/default (whose tests check the two agree).
var ShortNames = map[string][]string{"machineconfignodes.machineconfiguration.openshift.io": {"mcn"}}

// All returns every embedded CRD, with mco's ShortNames.
func All() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	out, err := decode(manifests, "config/crd")
	if err != nil {
		return nil, err
	}
	for _, crd := range out {
		for _, n := range ShortNames[crd.Name] {
			if !slices.Contains(crd.Spec.Names.ShortNames, n) {
				crd.Spec.Names.ShortNames = append(crd.Spec.Names.ShortNames, n)
			}
		}
	}
	return out, nil
}

// decode reads every .yaml file of fsys as a CRD.
func decode(fsys fs.FS, dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			return nil, fmt.Errorf("%s/%s: %w", dir, e.Name(), err)
		}
		out = append(out, crd)
	}
	return out, nil
}

// Installed is every CRD an install gets: OpenShift's copies (All) and mco's own API groups
// (config/crd-mco).
func Installed() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	openshift, err := All()
	if err != nil {
		return nil, err
	}
	own, err := decode(crdmco.Manifests, "config/crd-mco")
	if err != nil {
		return nil, err
	}
	return append(openshift, own...), nil
}
