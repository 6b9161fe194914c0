package containerruntime

import (
	"fmt"
	"regexp"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
)

// Limits OpenShift's controller enforces beyond the CRD's schema.
const (
	// MinPidsLimit: below it (except 0, no limit) a container cannot even start its runtime.
	MinPidsLimit = 20
	// MinLogSizeMax is conmon's read buffer; a positive logSizeMax must exceed it.
	MinLogSizeMax = 8192
)

var validLogLevels = []string{"error", "fatal", "panic", "warn", "info", "debug", "trace"}

// storePath is the CRD's rule for additional store paths (checked again here, as OpenShift
// does, so a config accepted before the rule existed is still refused by name).
var storePath = regexp.MustCompile(`^/[a-zA-Z0-9/._-]+$`)

const specField = "spec.containerRuntimeConfig"

// Validate returns an *Error naming every field of cfg OpenShift's controller refuses, or nil.
// Additional store paths are checked although the AdditionalStorageConfig feature they belong
// to is off, as OpenShift does: turning it on later must not surface old mistakes.
func Validate(cfg *mcfgv1.ContainerRuntimeConfig) error {
	c := cfg.Spec.ContainerRuntimeConfig
	if c == nil {
		return nil
	}
	var problems []FieldError
	add := func(field, format string, args ...any) {
		problems = append(problems, FieldError{Field: specField + "." + field, Reason: fmt.Sprintf(format, args...)})
	}
	if c.PidsLimit != nil && *c.PidsLimit != 0 && *c.PidsLimit < MinPidsLimit {
		add("pidsLimit", "%d is below the minimum %d (0 means no limit)", *c.PidsLimit, MinPidsLimit)
	}
	if c.LogSizeMax != nil && c.LogSizeMax.Value() > 0 && c.LogSizeMax.Value() <= MinLogSizeMax {
		add("logSizeMax", "%s must be more than %d bytes (8Ki, conmon's read buffer) or negative for no limit", c.LogSizeMax.String(), MinLogSizeMax)
	}
	if c.OverlaySize != nil && c.OverlaySize.Value() < 0 {
		add("overlaySize", "%s is negative", c.OverlaySize.String())
	}
	if c.LogLevel != "" && !contains(validLogLevels, c.LogLevel) {
		add("logLevel", "%q is not one of %s", c.LogLevel, strings.Join(validLogLevels, ", "))
	}
	switch c.DefaultRuntime {
	case mcfgv1.ContainerRuntimeDefaultRuntimeEmpty, mcfgv1.ContainerRuntimeDefaultRuntimeRunc, mcfgv1.ContainerRuntimeDefaultRuntimeCrun:
	default:
		add("defaultRuntime", "%q is not one of crun, runc", c.DefaultRuntime)
	}
	for i, s := range c.AdditionalLayerStores {
		checkStorePath(add, fmt.Sprintf("additionalLayerStores[%d].path", i), string(s.Path))
	}
	for i, s := range c.AdditionalImageStores {
		checkStorePath(add, fmt.Sprintf("additionalImageStores[%d].path", i), string(s.Path))
	}
	for i, s := range c.AdditionalArtifactStores {
		checkStorePath(add, fmt.Sprintf("additionalArtifactStores[%d].path", i), string(s.Path))
	}
	if len(problems) == 0 {
		return nil
	}
	return &Error{Object: cfg.Name, Problems: problems}
}

func checkStorePath(add func(field, format string, args ...any), field, p string) {
	switch {
	case p == "":
		add(field, "must not be empty")
	case !storePath.MatchString(p):
		add(field, "%q must be an absolute path of letters, digits, '/', '.', '_' and '-'", p)
	case strings.Contains(p, "//"):
		add(field, "%q must not contain consecutive slashes", p)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
