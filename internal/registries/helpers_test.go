package registries

import apicfgv1 "github.com/openshift/api/config/v1"

func apicfgvRegistrySourcesBlocked(scopes ...string) apicfgv1.RegistrySources {
	return apicfgv1.RegistrySources{BlockedRegistries: scopes}
}
