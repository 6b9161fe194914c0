package kubeletconfig

import (
	configv1 "github.com/openshift/api/config/v1"
)

// ianaCipherName maps the OpenSSL cipher names OpenShift's TLS profiles use to the IANA names
// the kubelet's tlsCipherSuites takes, for every suite Go's crypto/tls can negotiate (TLS 1.3
// suites keep their names). Suites missing here (DHE, CBC-SHA384, ...) are dropped, as OpenShift
// drops them. Names from the IANA TLS Cipher Suites registry and OpenSSL's ciphers(1).
var ianaCipherName = map[string]string{
	"TLS_AES_128_GCM_SHA256":        "TLS_AES_128_GCM_SHA256",
	"TLS_AES_256_GCM_SHA384":        "TLS_AES_256_GCM_SHA384",
	"TLS_CHACHA20_POLY1305_SHA256":  "TLS_CHACHA20_POLY1305_SHA256",
	"ECDHE-ECDSA-AES128-GCM-SHA256": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-RSA-AES128-GCM-SHA256":   "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-ECDSA-AES256-GCM-SHA384": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-RSA-AES256-GCM-SHA384":   "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-ECDSA-CHACHA20-POLY1305": "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-RSA-CHACHA20-POLY1305":   "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-ECDSA-AES128-SHA256":     "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
	"ECDHE-RSA-AES128-SHA256":       "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
	"ECDHE-ECDSA-AES128-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
	"ECDHE-RSA-AES128-SHA":          "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
	"ECDHE-ECDSA-AES256-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
	"ECDHE-RSA-AES256-SHA":          "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
	"ECDHE-RSA-DES-CBC3-SHA":        "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
	"AES128-GCM-SHA256":             "TLS_RSA_WITH_AES_128_GCM_SHA256",
	"AES256-GCM-SHA384":             "TLS_RSA_WITH_AES_256_GCM_SHA384",
	"AES128-SHA256":                 "TLS_RSA_WITH_AES_128_CBC_SHA256",
	"AES128-SHA":                    "TLS_RSA_WITH_AES_128_CBC_SHA",
	"AES256-SHA":                    "TLS_RSA_WITH_AES_256_CBC_SHA",
	"DES-CBC3-SHA":                  "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
}

// TLSSettings is what a TLS security profile sets in kubelet.conf.
type TLSSettings struct {
	MinVersion   string
	CipherSuites []string
}

// ProfileSettings resolves a TLS security profile as OpenShift does: nil, an unknown type or a
// Custom type without its spec mean Intermediate; ciphers become IANA names, in profile order.
func ProfileSettings(profile *configv1.TLSSecurityProfile) TLSSettings {
	var spec *configv1.TLSProfileSpec
	switch {
	case profile == nil:
	case profile.Type == configv1.TLSProfileCustomType:
		if profile.Custom != nil {
			spec = &profile.Custom.TLSProfileSpec
		}
	default:
		spec = configv1.TLSProfiles[profile.Type]
	}
	if spec == nil {
		spec = configv1.TLSProfiles[configv1.TLSProfileIntermediateType]
	}
	suites := make([]string, 0, len(spec.Ciphers))
	for _, c := range spec.Ciphers {
		if name, ok := ianaCipherName[c]; ok {
			suites = append(suites, name)
		}
	}
	return TLSSettings{MinVersion: string(spec.MinTLSVersion), CipherSuites: suites}
}
