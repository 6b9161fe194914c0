package render

import (
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"slices"
	"sync"
	"sync/atomic"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
)

// Defaults are what a pool's rendered config gets when no admin MachineConfig overrides them.
type Defaults struct {
	OSImageURL                     string
	BaseOSExtensionsContainerImage string
}

// Options tune one render.
type Options struct {
	Defaults Defaults
	// Current is the rendered config the pool targets now. When set, the new render must be
	// reachable from it on a running node (CheckReconcilable).
	Current *mcfgv1.MachineConfig
	// Overrides are the irreconcilable changes MachineConfiguration cluster allows over Current.
	Overrides Overrides
	// ControllerVersion is stamped on the result as generated-by-controller-version.
	ControllerVersion string
	// Parse, when set, replaces ValidateMachineConfigWithWarnings so a caller can reuse earlier
	// parses of unchanged MachineConfigs (ParseCache.ParseWithWarnings). It must behave exactly
	// like ValidateMachineConfigWithWarnings.
	Parse func(*mcfgv1.MachineConfig) (ignition.Config, []Warning, error)
	// ParseCurrent, when set, replaces ignition.Parse for Current's config, so a caller can
	// reuse an earlier parse of it (ParseCache.ParseRendered). It must behave exactly like
	// ignition.Parse.
	ParseCurrent func([]byte) (ignition.Config, error)
}

// Result is a successful render.
type Result struct {
	// Config is the rendered MachineConfig, named by its content.
	Config *mcfgv1.MachineConfig
	// Sources are the MachineConfigs merged, in merge order (also in Config's pool reference).
	Sources []corev1.ObjectReference
	// Ignition is the merged config, spec 3.5.
	Ignition ignition.Config
	// Warnings are what Ignition only warns about in the sources, in merge order: the render
	// went ahead as Ignition's (and OpenShift's) does.
	Warnings []Warning
}

type parsedConfig struct {
	mc  *mcfgv1.MachineConfig
	ign ignition.Config
}

// Render merges the MachineConfigs that pool selects out of all into one rendered MachineConfig.
// Every invalid MachineConfig is reported, not just the first; a pool that selects nothing is
// an error, as is a result too large to store or unreachable from opts.Current.
func Render(pool *mcfgv1.MachineConfigPool, all []*mcfgv1.MachineConfig, opts Options) (*Result, error) {
	selected, err := Select(pool, all)
	if err != nil {
		return nil, err
	}
	if len(selected) == 0 {
		return nil, &Error{Field: "spec.machineConfigSelector", Reason: fmt.Sprintf("pool %s: no MachineConfigs match %s", pool.Name, metav1.FormatLabelSelector(pool.Spec.MachineConfigSelector))}
	}
	parse := opts.Parse
	if parse == nil {
		parse = ValidateMachineConfigWithWarnings
	}
	// The current config is as large as the result: it is parsed alongside the sources.
	var current currentConfig
	var parsingCurrent sync.WaitGroup
	if opts.Current != nil {
		parsingCurrent.Go(func() { current = parseCurrent(opts.Current, opts.ParseCurrent) })
	}
	parsed, warnings, errs := parseAll(selected, parse)
	parsingCurrent.Wait()
	if len(errs) > 0 {
		return nil, errs
	}

	igns := make([]ignition.Config, len(parsed))
	for i, p := range parsed {
		igns[i] = p.ign
	}
	merged := mergeIgnition(igns)
	spec := mergeSpecFields(selected, opts.Defaults)
	raw, err := marshalIgnition(merged)
	if err != nil {
		return nil, fmt.Errorf("pool %s: serialising merged Ignition: %w", pool.Name, err)
	}
	spec.Config = runtime.RawExtension{Raw: raw}

	if err := checkMerged(pool.Name, selected, spec); err != nil {
		return nil, err
	}
	if err := checkEtcdIndexTemplates(pool, parsed, merged); err != nil {
		return nil, err
	}
	if opts.Current != nil {
		if err := checkReconcilable(current, merged, spec, parsed, opts.Overrides); err != nil {
			return nil, err
		}
	}
	// The spec is most of the object and is serialised once, for the name and for the size.
	specJSON, err := marshalSpec(spec)
	if err != nil {
		return nil, err
	}
	name := nameFor(pool.Name, specJSON)
	sources := make([]corev1.ObjectReference, len(selected))
	for i, mc := range selected {
		sources[i] = corev1.ObjectReference{Kind: "MachineConfig", Name: mc.Name, APIVersion: mcfgv1.GroupVersion.String()}
	}
	rendered := &mcfgv1.MachineConfig{
		TypeMeta: metav1.TypeMeta{Kind: "MachineConfig", APIVersion: mcfgv1.GroupVersion.String()},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{protocol.GeneratedByControllerVersionAnnotation: opts.ControllerVersion},
		},
		Spec: spec,
	}
	if pool.UID != "" {
		rendered.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: mcfgv1.GroupVersion.String(), Kind: "MachineConfigPool", Name: pool.Name, UID: pool.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}
	}
	if size := renderedSize(rendered, specJSON); size > MaxRenderedSize {
		return nil, &Error{Reason: fmt.Sprintf("pool %s: rendered config is %d bytes, over the %d byte limit; move large files out of MachineConfigs", pool.Name, size, MaxRenderedSize)}
	}
	return &Result{Config: rendered, Sources: sources, Ignition: merged, Warnings: warnings}, nil
}

// renderedSize is the length of mc as JSON, given its spec's JSON: the small rest is serialised
// on its own instead of the whole object again.
func renderedSize(mc *mcfgv1.MachineConfig, specJSON []byte) int {
	rest, err := json.Marshal(struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
	}{mc.TypeMeta, mc.ObjectMeta})
	if err != nil {
		return len(specJSON)
	}
	return len(rest) + len(`,"spec":`) + len(specJSON)
}

// checkMerged enforces rules about the combination of MachineConfigs.
func checkMerged(pool string, selected []*mcfgv1.MachineConfig, spec mcfgv1.MachineConfigSpec) error {
	if spec.KernelType == KernelTypeDefault || !slices.Contains(spec.Extensions, "kernel-devel") {
		return nil
	}
	var culprits []string
	for _, mc := range selected {
		if slices.Contains(mc.Spec.Extensions, "kernel-devel") || (mc.Spec.KernelType != "" && mc.Spec.KernelType != KernelTypeDefault) {
			culprits = append(culprits, mc.Name)
		}
	}
	return &Error{Field: "spec.extensions", Reason: fmt.Sprintf("pool %s: the kernel-devel extension cannot be combined with kernel type %s (set by %v)", pool, spec.KernelType, culprits)}
}

// currentConfig is Options.Current with its config parsed.
type currentConfig struct {
	mc  *mcfgv1.MachineConfig
	ign ignition.Config
	err error
}

func parseCurrent(mc *mcfgv1.MachineConfig, parse func([]byte) (ignition.Config, error)) currentConfig {
	if parse == nil {
		parse = ignition.Parse
	}
	cfg, err := parse(mc.Spec.Config.Raw)
	return currentConfig{mc: mc, ign: cfg, err: err}
}

func checkReconcilable(current currentConfig, merged ignition.Config, spec mcfgv1.MachineConfigSpec, parsed []parsedConfig, allow Overrides) error {
	if current.err != nil {
		// The current config was accepted once; if it no longer parses, nothing can be compared
		// and refusing every future render would wedge the pool.
		return nil
	}
	violations := CheckReconcilable(current.ign, merged, current.mc.Spec.FIPS, spec.FIPS, allow)
	if len(violations) == 0 {
		return nil
	}
	errs := make(Errors, 0, len(violations))
	for _, v := range violations {
		field := "spec.config." + v.Field
		if v.Field == "fips" {
			field = "spec.fips"
		}
		reason := v.Reason
		if v.Key != "" {
			reason = fmt.Sprintf("%q: %s", v.Key, v.Reason)
		}
		errs = append(errs, &Error{
			MachineConfig: culprit(v, parsed),
			Field:         field,
			Reason:        fmt.Sprintf("not reconcilable with %s, which nodes run: %s", current.mc.Name, reason),
		})
	}
	return errs
}

// parseAll parses every MachineConfig, on all cores: parsing and validating is most of a
// render's cost. Results and warnings keep merge order; every failure is collected.
func parseAll(mcs []*mcfgv1.MachineConfig, parse func(*mcfgv1.MachineConfig) (ignition.Config, []Warning, error)) ([]parsedConfig, []Warning, Errors) {
	parsed := make([]parsedConfig, len(mcs))
	warned := make([][]Warning, len(mcs))
	failures := make([]error, len(mcs))
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range min(goruntime.GOMAXPROCS(0), len(mcs)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(mcs); i = int(next.Add(1) - 1) {
				cfg, ws, err := parse(mcs[i])
				parsed[i], warned[i], failures[i] = parsedConfig{mc: mcs[i], ign: cfg}, ws, err
			}
		})
	}
	wg.Wait()
	var errs Errors
	for i, err := range failures {
		if err != nil {
			errs = append(errs, asErrors(mcs[i].Name, err)...)
		}
	}
	return parsed, slices.Concat(warned...), errs
}

func asErrors(mc string, err error) Errors {
	switch e := err.(type) {
	case Errors:
		return e
	case *Error:
		return Errors{e}
	default:
		return configErrors(mc, err)
	}
}
