package registries

import (
	"bytes"
	"fmt"

	"github.com/BurntSushi/toml"
	"github.com/containers/image/v5/pkg/sysregistriesv2"
	apicfgv1 "github.com/openshift/api/config/v1"
	apioperatorsv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	runtimeutils "github.com/openshift/runtime-utils/pkg/registries"
)

// Files of 99-<pool>-generated-registries.
const (
	RegistriesConfPath = "/etc/containers/registries.conf"
	// SearchRegistriesDropInPath holds image.config's containerRuntimeSearchRegistries.
	SearchRegistriesDropInPath = "/etc/containers/registries.conf.d/01-image-searchRegistries.conf"
)

// registriesConf decodes base, lets OpenShift's own editor (runtime-utils) apply the insecure and
// blocked scopes and the mirror sets (merged per source in preference order, digest mirrors
// "digest-only", tag mirrors "tag-only", NeverContactSource blocking the source, flags and
// mirrors carried into nested scopes) and encodes it again: comments and unknown keys of base do
// not survive, as on OpenShift.
func registriesConf(base []byte, insecure, blocked []string, icsp []*apioperatorsv1alpha1.ImageContentSourcePolicy, idms []*apicfgv1.ImageDigestMirrorSet, itms []*apicfgv1.ImageTagMirrorSet) ([]byte, error) {
	var conf sysregistriesv2.V2RegistriesConf
	if _, err := toml.Decode(string(base), &conf); err != nil {
		return nil, fmt.Errorf("decoding the base registries.conf: %w", err)
	}
	if err := runtimeutils.EditRegistriesConfig(&conf, insecure, blocked, icsp, idms, itms); err != nil {
		return nil, err
	}
	return encodeTOML(conf)
}

// searchRegistriesDropIn is a registries.conf holding only the search list; the rest of the
// type's keys come out with their zero values, as OpenShift writes it.
func searchRegistriesDropIn(search []string) ([]byte, error) {
	return encodeTOML(sysregistriesv2.V2RegistriesConf{UnqualifiedSearchRegistries: search})
}

func encodeTOML(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
