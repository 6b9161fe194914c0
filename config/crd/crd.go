// Package crd embeds the CustomResourceDefinitions mco installs (copied verbatim from
// github.com/openshift/api by `make crds`), so `mco dev up` and installers need no checkout.
package crd

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var manifests embed.FS

// All returns every embedded CRD.
func All() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	entries, err := fs.ReadDir(manifests, ".")
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		data, err := manifests.ReadFile(e.Name())
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, crd)
	}
	return out, nil
}
