// Command kubeletgoldens runs the kubelet's own configuration code (k8s.io/kubernetes at this
// module's version) to make the goldens internal/kubeletfiles checks itself against; it is
// not part of mco and is never built by make tools. From hack/tools:
//
//	go run ./kubeletgoldens flags > ../../internal/kubeletfiles/kubelet-flags.json
//	go run ./kubeletgoldens defaults > ../../internal/kubeletfiles/kubelet-defaults.json
//	go run ./kubeletgoldens merge ../../internal/kubeletfiles/testdata/kubelet
//
// flags prints, for every flag the kubelet registers over its KubeletConfiguration
// (options.AddKubeletConfigFlags), the v1beta1 field paths it sets: each flag is set on a fresh
// configuration and the v1beta1 encodings before and after are compared (maps are one field:
// a flag replaces them whole).
//
// defaults prints the kubelet's defaults (see printDefaults).
//
// merge loads each case directory as the kubelet would be started with --config=<case>/config
// (when present), --config-dir=<case>/config-dir (when present) and the arguments in
// <case>/args.json, through the kubelet's own loadConfigFile, mergeKubeletConfigurations and
// kubeletConfigFlagPrecedence (cmd/kubelet/app, reached by go:linkname since they are
// unexported), then ValidateKubeletConfiguration, and writes the resulting v1beta1
// configuration and its validation error, or the loading error, to <case>/kubelet.json.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	_ "unsafe" // go:linkname

	"github.com/spf13/pflag"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
	"k8s.io/kubernetes/cmd/kubelet/app/options"
	kubeletconfiginternal "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletconfigv1beta1conversion "k8s.io/kubernetes/pkg/kubelet/apis/config/v1beta1"
	kubeletconfigvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
)

//go:linkname mergeKubeletConfigurations k8s.io/kubernetes/cmd/kubelet/app.mergeKubeletConfigurations
func mergeKubeletConfigurations(kc *kubeletconfiginternal.KubeletConfiguration, dir string) ([]string, error)

//go:linkname loadConfigFile k8s.io/kubernetes/cmd/kubelet/app.loadConfigFile
func loadConfigFile(ctx context.Context, name string) (*kubeletconfiginternal.KubeletConfiguration, error)

//go:linkname kubeletConfigFlagPrecedence k8s.io/kubernetes/cmd/kubelet/app.kubeletConfigFlagPrecedence
func kubeletConfigFlagPrecedence(kc *kubeletconfiginternal.KubeletConfiguration, args []string) error

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: kubeletgoldens flags | defaults | merge DIR")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "flags":
		err = printFlags()
	case "merge":
		err = mergeCases(os.Args[2])
	case "defaults":
		err = printDefaults()
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// printDefaults prints the kubelet's defaults as it applies them: "defaulted" is what its
// defaulting (SetDefaults_KubeletConfiguration, default feature gates) makes of an empty v1beta1
// configuration, as after a merge of drop-ins; "loaded" what loadConfigFile makes of a --config
// file with nothing but apiVersion and kind (defaulting and the default evictionHard);
// "withoutConfig" the configuration of a kubelet without --config (options.NewKubeletConfiguration:
// defaulting and the legacy defaults of its flags).
func printDefaults() error {
	defaulted := &kubeletconfigv1beta1.KubeletConfiguration{}
	kubeletconfigv1beta1conversion.SetDefaults_KubeletConfiguration(defaulted)
	dir, err := os.MkdirTemp("", "kubeletgoldens")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	empty := filepath.Join(dir, "config")
	if err := os.WriteFile(empty, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"), 0o644); err != nil {
		return err
	}
	kc, err := loadConfigFile(context.Background(), empty)
	if err != nil {
		return err
	}
	loaded, err := toV1beta1(kc)
	if err != nil {
		return err
	}
	if kc, err = options.NewKubeletConfiguration(); err != nil {
		return err
	}
	without, err := toV1beta1(kc)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(map[string]any{"defaulted": defaulted, "loaded": loaded, "withoutConfig": without}, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Printf("%s\n", data)
	return err
}

func toV1beta1(kc *kubeletconfiginternal.KubeletConfiguration) (*kubeletconfigv1beta1.KubeletConfiguration, error) {
	out := &kubeletconfigv1beta1.KubeletConfiguration{}
	err := kubeletconfigv1beta1conversion.Convert_config_KubeletConfiguration_To_v1beta1_KubeletConfiguration(kc, out, nil)
	return out, err
}

type result struct {
	Config *kubeletconfigv1beta1.KubeletConfiguration `json:"config,omitempty"`
	// Error: the kubelet could not load its configuration.
	Error string `json:"error,omitempty"`
	// Invalid: it loaded it, and its validation (ValidateKubeletConfiguration) refuses it, so
	// the kubelet would not start either.
	Invalid string `json:"invalid,omitempty"`
}

func mergeCases(root string) error {
	entries, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		var r result
		if cfg, invalid, err := load(dir); err != nil {
			// Paths in the kubelet's messages relative to the case, so the goldens do not
			// depend on where the checkout is.
			r.Error = err.Error()
			if abs, err := filepath.Abs(dir); err == nil {
				r.Error = strings.ReplaceAll(r.Error, abs+"/", "")
			}
			r.Error = strings.ReplaceAll(r.Error, dir+"/", "")
		} else {
			r.Config, r.Invalid = cfg, invalid
		}
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "kubelet.json"), append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// load is what the kubelet's command does before it runs (cmd/kubelet/app/server.go
// NewKubeletCommand's RunE): load, merge, flags, then validation, whose refusal is invalid.
func load(dir string) (cfg *kubeletconfigv1beta1.KubeletConfiguration, invalid string, err error) {
	kc, err := options.NewKubeletConfiguration()
	if err != nil {
		return nil, "", err
	}
	config, dropIns := filepath.Join(dir, "config"), filepath.Join(dir, "config-dir")
	var args []string
	if data, err := os.ReadFile(filepath.Join(dir, "args.json")); err == nil {
		if err := json.Unmarshal(data, &args); err != nil {
			return nil, "", err
		}
	}
	haveConfig, haveDir := exists(config), exists(dropIns)
	if haveConfig {
		if kc, err = loadConfigFile(context.Background(), config); err != nil {
			return nil, "", err
		}
	}
	if haveDir {
		if _, err := mergeKubeletConfigurations(kc, dropIns); err != nil {
			return nil, "", err
		}
	}
	if haveConfig || haveDir {
		if err := kubeletConfigFlagPrecedence(kc, args); err != nil {
			return nil, "", err
		}
	}
	gates := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	if err := gates.SetFromMap(kc.FeatureGates); err != nil {
		return nil, "", err
	}
	// Its one check of the host running it (failCgroupV1 on a cgroup v1 host) is left out, so
	// the goldens do not depend on where they are made.
	hostless := kc.DeepCopy()
	hostless.FailCgroupV1 = false
	if err := kubeletconfigvalidation.ValidateKubeletConfiguration(hostless, gates); err != nil {
		invalid = err.Error()
	}
	cfg, err = toV1beta1(kc)
	return cfg, invalid, err
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// A value per flag type that differs from the default, tried in order until one parses and
// changes something.
var candidates = map[string][]string{
	"string":                             {"x-test-value", "/x/test", "static", "none", "VersionTLS13", "single-numa-node", "pod", "Static", "json", "application/json", "10.1.0.0/16", "0-1", "promiscuous-bridge"},
	"mapStringBool":                      {"Foo=true"},
	"Level":                              {"7"},
	"ip":                                 {"10.9.9.9"},
	"stringSlice":                        {"a,b", "10.9.9.9", "pods", "TLS_AES_128_GCM_SHA256"},
	"bool":                               {"true", "false"},
	"mapStringString":                    {"memory.available=123Mi", "memory.available<123Mi", "cpu=123m", "memory=10%", "full-pcpus-only=true", "prefer-closest-numa-nodes=true"},
	"[]v1.Taint":                         {"k=v:NoSchedule"},
	"pattern=N,...":                      {"foo=3"},
	"duration":                           {"123s"},
	"quantity":                           {"123Ki"},
	"colonSeparatedMultimapStringString": {"a:b"},
	"int32":                              {"123", "77"},
	"int64":                              {"123456"},
	"reserved-memory":                    {"0:memory=1Gi"},
}

func printFlags() error {
	maps := mapFields(reflect.TypeFor[kubeletconfigv1beta1.KubeletConfiguration](), "", map[string]bool{})
	fresh := func() (*pflag.FlagSet, func() map[string]string) {
		kc, err := options.NewKubeletConfiguration()
		if err != nil {
			panic(err)
		}
		fs := pflag.NewFlagSet("", pflag.ContinueOnError)
		options.AddKubeletConfigFlags(fs, kc)
		fs.SetOutput(io.Discard) // each flag's deprecation notice
		return fs, func() map[string]string {
			v, err := toV1beta1(kc)
			if err != nil {
				panic(err)
			}
			js, _ := json.Marshal(v)
			var doc any
			if err := json.Unmarshal(js, &doc); err != nil {
				panic(err)
			}
			out := map[string]string{}
			leaves(doc, "", maps, out)
			return out
		}
	}
	all, _ := fresh()
	table := map[string][]string{}
	var missing []string
	all.VisitAll(func(f *pflag.Flag) {
		for _, v := range candidates[f.Value.Type()] {
			set, snapshot := fresh()
			before := snapshot()
			if err := set.Set(f.Name, v); err != nil {
				continue
			}
			after := snapshot()
			var changed []string
			for k := range after {
				if before[k] != after[k] {
					changed = append(changed, k)
				}
			}
			for k := range before {
				if _, ok := after[k]; !ok {
					changed = append(changed, k)
				}
			}
			if len(changed) > 0 {
				sort.Strings(changed)
				table[f.Name] = changed
				return
			}
		}
		missing = append(missing, f.Name+" ("+f.Value.Type()+")")
	})
	if len(missing) > 0 {
		return fmt.Errorf("no field found for the flags %v: add a value for their type to candidates", missing)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(table)
}

// leaves flattens a decoded JSON document into dotted paths, maps (per maps) being leaves.
func leaves(v any, prefix string, maps map[string]bool, out map[string]string) {
	if m, ok := v.(map[string]any); ok && !maps[prefix] {
		for k, e := range m {
			leaves(e, strings.TrimPrefix(prefix+"."+k, "."), maps, out)
		}
		return
	}
	b, _ := json.Marshal(v)
	out[prefix] = string(b)
}

// mapFields lists the dotted paths of t's map-typed fields.
func mapFields(t reflect.Type, prefix string, out map[string]bool) map[string]bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return out
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		p := strings.TrimPrefix(prefix+"."+name, ".")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Map {
			out[p] = true
		}
		mapFields(ft, p, out)
	}
	return out
}
