package kubeletfiles

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Effective is the configuration a kubelet runs with, from its --config file (nil when it has
// none) and the files below its --config-dir (keyed by their path in that directory,
// slash-separated; a nil map when it has no --config-dir, an empty one for an empty directory),
// merged as the kubelet v1.36 merges them (k8s.io/kubernetes
// cmd/kubelet/app/server.go: loadConfigFile, then mergeKubeletConfigurations):
//
//   - the --config file is decoded into the v1beta1 type (case-sensitive keys, unknown fields
//     dropped), defaulted, and encoded back to JSON;
//   - the drop-ins ending in .conf, in the order filepath.WalkDir visits them (DropInOrder:
//     lexical per directory, subdirectories included), are each a JSON merge patch (RFC 7386,
//     gopkg.in/evanphx/json-patch.v4 MergePatch, the kubelet's library and version) over the
//     result so far: objects merge key by key, lists and scalars replace, null removes;
//   - the result is decoded into the v1beta1 type with encoding/json, and defaulted again.
//
// The kubelet's defaults are filled in where it fills them in: in the --config file as loaded
// (or the configuration of a kubelet without one), and in the merged result (see
// kubeletDefaultsJSON). Like the kubelet it refuses an empty file, and a drop-in or --config
// file that is not a kubelet.config.k8s.io/v1beta1 KubeletConfiguration (such a kubelet would
// not have started). Command-line flags, which win over every file, are not applied here (see
// FlagsOverriding). Relative paths in the --config file stay relative (the
// kubelet resolves them against the file's directory).
func Effective(config []byte, dropIns map[string][]byte) (*kubeletv1beta1.KubeletConfiguration, error) {
	defaults := decodedKubeletDefaults()
	base := &defaults.WithoutConfig
	if config != nil {
		js, err := kubeletConfigurationJSON("the --config file", config)
		if err != nil {
			return nil, err
		}
		base = &kubeletv1beta1.KubeletConfiguration{}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(js, base); err != nil {
			return nil, fmt.Errorf("the --config file: %w", err)
		}
		fillDefaults(reflect.ValueOf(base).Elem(), reflect.ValueOf(&defaults.Loaded).Elem())
		if base.MergeDefaultEvictionSettings != nil && *base.MergeDefaultEvictionSettings {
			for k, v := range defaults.Loaded.EvictionHard {
				if _, ok := base.EvictionHard[k]; !ok {
					base.EvictionHard[k] = v
				}
			}
		}
	}
	if dropIns == nil {
		// No --config-dir: the kubelet takes the --config file as loaded, with no round trip
		// through JSON (which would drop empty lists, and so default them).
		return base, nil
	}
	merged, err := json.Marshal(base)
	if err != nil {
		return nil, err
	}
	for _, name := range DropInOrder(slices.Collect(maps.Keys(dropIns))) {
		js, err := kubeletConfigurationJSON("drop-in "+name, dropIns[name])
		if err != nil {
			return nil, err
		}
		if merged, err = jsonpatch.MergePatch(merged, js); err != nil {
			return nil, fmt.Errorf("drop-in %s: merging: %w", name, err)
		}
	}
	out := &kubeletv1beta1.KubeletConfiguration{}
	if err := json.Unmarshal(merged, out); err != nil {
		return nil, fmt.Errorf("the merged kubelet configuration: %w", err)
	}
	fillDefaults(reflect.ValueOf(out).Elem(), reflect.ValueOf(&defaults.Defaulted).Elem())
	return out, nil
}

// kubeletDefaultsJSON is the kubelet's defaults at the pinned version, as the kubelet's own code
// makes them (hack/tools/kubeletgoldens defaults): "defaulted" after its defaulting
// (SetDefaults_KubeletConfiguration), "loaded" after loading a --config file (defaulting and
// the default evictionHard), "withoutConfig" a kubelet's without --config (with its flags'
// legacy defaults: anonymous authentication, AlwaysAllow, the read-only port).
//
//go:embed kubelet-defaults.json
var kubeletDefaultsJSON []byte

type kubeletDefaults struct {
	Defaulted, Loaded, WithoutConfig kubeletv1beta1.KubeletConfiguration
}

// decodedKubeletDefaults decodes the defaults afresh: the caller may change what it gets.
func decodedKubeletDefaults() kubeletDefaults {
	var d kubeletDefaults
	if err := json.Unmarshal(kubeletDefaultsJSON, &d); err != nil {
		panic("kubelet-defaults.json: " + err.Error())
	}
	return d
}

// fillDefaults sets every zero field of cfg that def has a value for, as the kubelet's
// defaulting does (it defaults a field only when it is unset: a nil pointer, map or list, or
// the zero value of a field that cannot say "unset" otherwise), descending into structs that
// are decoded field by field. Defaults that depend on other fields or on feature gates are
// those of the default feature gates.
func fillDefaults(cfg, def reflect.Value) {
	for i := range cfg.NumField() {
		if !cfg.Type().Field(i).IsExported() {
			continue
		}
		c, d := cfg.Field(i), def.Field(i)
		if c.Kind() == reflect.Struct && mergesByKey(c.Type()) {
			fillDefaults(c, d)
			continue
		}
		if c.IsZero() && !d.IsZero() {
			c.Set(d)
		}
	}
}

// DropInOrder is the drop-ins of names (paths in a --config-dir, slash-separated) the kubelet
// reads, in the order it reads them: only names ending in .conf, in filepath.WalkDir's order,
// which sorts each directory's entries by name and descends into a subdirectory where its
// name sorts (so "a/x.conf" comes before "a.conf": the entry "a" sorts before "a.conf").
func DropInOrder(names []string) []string {
	var out []string
	for _, n := range names {
		if path.Ext(n) == ".conf" {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
	})
	return out
}

// kubeletConfigurationJSON is a kubelet configuration file as JSON, refused as the kubelet
// refuses it: empty, not YAML or JSON, or not of the one kind and version it reads.
func kubeletConfigurationJSON(what string, data []byte) ([]byte, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%s is empty", what)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(js, &head); err != nil {
		return nil, fmt.Errorf("%s: not a KubeletConfiguration: %w", what, err)
	}
	if want := kubeletv1beta1.SchemeGroupVersion.String(); head.APIVersion != want || head.Kind != "KubeletConfiguration" {
		return nil, fmt.Errorf("%s: apiVersion %q, kind %q: the kubelet reads only %s KubeletConfiguration", what, head.APIVersion, head.Kind, want)
	}
	return js, nil
}

// Satisfies lists the fields of the drop-in whose value the effective configuration does not
// have (dotted JSON paths, a map's keys included: "evictionHard.memory.available"), sorted;
// none means every setting of the drop-in is in effect. Values are compared as the kubelet
// holds them (decoded: "60s" and "1m" are the same duration); a field the drop-in writes as an
// object is checked key by key, since the merge keeps the keys it does not name. A key that is
// no KubeletConfiguration field cannot be in effect and is listed; nulls (the kubelet's
// default) are not checked. A drop-in that is not a KubeletConfiguration is one entry saying so.
func Satisfies(effective *kubeletv1beta1.KubeletConfiguration, dropIn []byte) []string {
	js, err := kubeletConfigurationJSON("the drop-in", dropIn)
	if err != nil {
		return []string{err.Error()}
	}
	var raw map[string]any
	want := &kubeletv1beta1.KubeletConfiguration{}
	if err := json.Unmarshal(js, &raw); err != nil {
		return []string{err.Error()}
	}
	if err := json.Unmarshal(js, want); err != nil {
		return []string{"the drop-in: " + err.Error()}
	}
	delete(raw, "apiVersion")
	delete(raw, "kind")
	var out []string
	notInEffect(raw, reflect.ValueOf(want).Elem(), reflect.ValueOf(effective).Elem(), "", &out)
	slices.Sort(out)
	return out
}

// notInEffect adds to out the paths of raw (the drop-in as written, at prefix) whose values in
// want (the drop-in decoded) and have (the effective configuration) differ.
func notInEffect(raw map[string]any, want, have reflect.Value, prefix string, out *[]string) {
	fields := map[string]JSONField{}
	if want.Kind() == reflect.Struct {
		fields = JSONFields(want.Type())
	}
	for k, v := range raw {
		if v == nil {
			continue
		}
		p := strings.TrimPrefix(prefix+"."+k, ".")
		var w, h reflect.Value
		switch want.Kind() {
		case reflect.Struct:
			name, f, ok := FieldFor(fields, k)
			if !ok {
				*out = append(*out, p+" (not a KubeletConfiguration field)")
				continue
			}
			p = strings.TrimPrefix(prefix+"."+name, ".")
			w, h = want.FieldByIndex(f.Index), have.FieldByIndex(f.Index)
		case reflect.Map:
			key := reflect.ValueOf(k).Convert(want.Type().Key())
			if w, h = want.MapIndex(key), have.MapIndex(key); !h.IsValid() {
				*out = append(*out, p)
				continue
			}
		}
		if obj, ok := v.(map[string]any); ok && mergesByKey(w.Type()) {
			w, h = deref(w), deref(h)
			if !h.IsValid() {
				*out = append(*out, p)
				continue
			}
			notInEffect(obj, w, h, p, out)
			continue
		}
		if !sameValue(w, h) {
			*out = append(*out, p)
		}
	}
}

// sameValue compares decoded values, an empty list or map the same as none: JSON written with
// omitempty cannot tell them apart, and the kubelet's defaulting has already given a value to
// what it would not leave unset.
func sameValue(a, b reflect.Value) bool {
	empty := func(v reflect.Value) bool {
		v = deref(v)
		return v.IsValid() && (v.Kind() == reflect.Slice || v.Kind() == reflect.Map) && v.Len() == 0
	}
	if empty(a) && empty(b) {
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// mergesByKey: a JSON object of type t merges key by key under a merge patch, and the decoded
// value can be compared key by key (a struct decoded field by field, or a map), unlike types
// that decode themselves from an object as a whole.
func mergesByKey(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(JSONUnmarshaler) {
		return false
	}
	return t.Kind() == reflect.Struct || (t.Kind() == reflect.Map && t.Key().Kind() == reflect.String)
}

// deref follows pointers; a nil one gives the invalid Value.
func deref(v reflect.Value) reflect.Value {
	for v.IsValid() && v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	return v
}
