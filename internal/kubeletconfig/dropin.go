package kubeletconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/internal/kubeletfiles"
)

// dropIn is the KubeletConfiguration drop-in for kc: only what kc says, for a kubelet whose own
// configuration (kubeadm's, say) stays as it is. In the order OpenShift applies them: the
// KubeletConfig's TLS profile (not the cluster's: this kubelet's TLS is the host's business
// unless the KubeletConfig says otherwise), then spec.kubeletConfig's fields as written (so
// explicit zero values such as protectKernelDefaults: false or staticPodPath: "" count, as
// they would in a file of the admin's own), then spec.logLevel as logging.verbosity (on
// OpenShift it is the -v flag, which wins over the file). systemReserved stays here: the node
// sizing file is read by OpenShift's kubelet.service only.
func dropIn(kc *mcfgv1.KubeletConfig) ([]byte, error) {
	if a := kc.Spec.AutoSizingReserved; a != nil && *a {
		return nil, fieldError(kc.Name, "spec.autoSizingReserved",
			"true needs OpenShift's kubelet.service, which computes system-reserved from %s; this pool has no MachineConfig writing %s, so the KubeletConfig becomes the kubelet drop-in %s and nothing would read that file: set %s.systemReserved instead",
			NodeSizingEnvPath, KubeletConfPath, kubeletfiles.DropInPath, kubeletConfigField)
	}
	out := map[string]any{
		"apiVersion": kubeletv1beta1.SchemeGroupVersion.String(),
		"kind":       "KubeletConfiguration",
	}
	if p := kc.Spec.TLSSecurityProfile; p != nil {
		s := ProfileSettings(p)
		out["tlsMinVersion"], out["tlsCipherSuites"] = s.MinVersion, s.CipherSuites
	}
	user, err := writtenFields(kc)
	if err != nil {
		return nil, err
	}
	// Feature gates are the cluster's, never a KubeletConfig's: Validate refuses any, and an
	// empty map is left out as OpenShift's merge leaves it out.
	delete(user, "featureGates")
	for k, v := range user {
		out[k] = v
	}
	if l := kc.Spec.LogLevel; l != nil {
		logging, _ := out["logging"].(map[string]any)
		if logging == nil {
			logging = map[string]any{}
		}
		logging["verbosity"] = *l
		out["logging"] = logging
	}
	data, err := yaml.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("KubeletConfig %s: encoding %s: %w", kc.Name, kubeletfiles.DropInPath, err)
	}
	return data, nil
}

// writtenFields is spec.kubeletConfig as the admin wrote it, under the field names the kubelet
// reads: keys matched to KubeletConfiguration's fields as the lenient decode matches them (the
// exact name, else case-insensitively), so the drop-in means what Validate checked. Unknown
// keys are left out (UnknownFields tells the admin), and so are nulls, which in a drop-in
// would reset the host's setting to the kubelet's default rather than leave it alone.
// apiVersion and kind are the drop-in's own.
func writtenFields(kc *mcfgv1.KubeletConfig) (map[string]any, error) {
	if kc.Spec.KubeletConfig == nil || kc.Spec.KubeletConfig.Raw == nil {
		return nil, nil
	}
	js, err := yaml.YAMLToJSON(kc.Spec.KubeletConfig.Raw)
	if err != nil {
		return nil, fieldError(kc.Name, kubeletConfigField, "is not a KubeletConfiguration: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber() // 64-bit values stay exact
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fieldError(kc.Name, kubeletConfigField, "is not a KubeletConfiguration: %v", err)
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, fieldError(kc.Name, kubeletConfigField, "is not a KubeletConfiguration: not an object")
	}
	delete(top, "apiVersion")
	delete(top, "kind")
	out, bad := canonical(top, reflect.TypeFor[kubeletv1beta1.KubeletConfiguration](), kubeletConfigField)
	if bad != nil {
		return nil, fieldError(kc.Name, bad.field, "%s", bad.reason)
	}
	m, _ := out.(map[string]any)
	return m, nil
}

type canonicalError struct{ field, reason string }

// canonical renames v's object keys to the JSON names of t's fields, recursively, and drops
// nulls and keys t has no field for. Values of types that decode themselves (durations) and
// scalars stay as written.
func canonical(v any, t reflect.Type, path string) (any, *canonicalError) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(kubeletfiles.JSONUnmarshaler) {
		return v, nil
	}
	switch v := v.(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Struct:
			fields := kubeletfiles.JSONFields(t)
			out := map[string]any{}
			from := map[string]string{}
			for _, k := range slices.Sorted(maps.Keys(v)) {
				if v[k] == nil {
					continue
				}
				name, f, ok := kubeletfiles.FieldFor(fields, k)
				if !ok {
					continue
				}
				if prev, dup := from[name]; dup {
					return nil, &canonicalError{path, fmt.Sprintf("%q and %q both set %s; write it once", prev, k, name)}
				}
				c, err := canonical(v[k], f.Type, path+"."+name)
				if err != nil {
					return nil, err
				}
				out[name], from[name] = c, k
			}
			return out, nil
		case reflect.Map:
			out := map[string]any{}
			for k, e := range v {
				if e == nil {
					continue
				}
				c, err := canonical(e, t.Elem(), path+"."+k)
				if err != nil {
					return nil, err
				}
				out[k] = c
			}
			return out, nil
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			out := make([]any, 0, len(v))
			for i, e := range v {
				c, err := canonical(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
				if err != nil {
					return nil, err
				}
				out = append(out, c)
			}
			return out, nil
		}
	}
	return v, nil
}
