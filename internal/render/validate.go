package render

import (
	"fmt"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/ignition"
)

// MaxRenderedSize is the largest rendered MachineConfig, as JSON, that is accepted: etcd and the
// API server refuse objects much past 1.5 MiB, and OpenShift uses the same bound.
const MaxRenderedSize = 1_572_864

// Kernel types a MachineConfig may ask for.
const (
	KernelTypeDefault  = "default"
	KernelTypeRealtime = "realtime"
	KernelType64kPages = "64k-pages"
)

// SupportedExtensions are the RHCOS extensions a MachineConfig may request, with the packages
// each one installs on the node.
var SupportedExtensions = map[string][]string{
	"two-node-ha":          {"pacemaker", "pcs", "fence-agents-all"},
	"ipsec":                {"NetworkManager-libreswan", "libreswan"},
	"usbguard":             {"usbguard"},
	"kerberos":             {"krb5-workstation", "libkadm5"},
	"kernel-devel":         {"kernel-devel", "kernel-headers"},
	"sandboxed-containers": {"kata-containers"},
	"sysstat":              {"sysstat"},
}

// ValidateMachineConfig checks one MachineConfig on its own: its Ignition parses and validates,
// and it asks only for things a node can be given day 2. It returns the parsed Ignition so
// callers do not parse twice.
func ValidateMachineConfig(mc *mcfgv1.MachineConfig) (ignition.Config, error) {
	cfg, _, err := ValidateMachineConfigWithWarnings(mc)
	return cfg, err
}

// ValidateMachineConfigWithWarnings is ValidateMachineConfig with what Ignition only warns
// about in the MachineConfig's config, which renders all the same. Warnings come with errors too.
func ValidateMachineConfigWithWarnings(mc *mcfgv1.MachineConfig) (ignition.Config, []Warning, error) {
	cfg, warnings, err := ignition.ParseWithWarnings(mc.Spec.Config.Raw)
	cfg, err = validateParsed(mc, cfg, err)
	return cfg, configWarnings(mc.Name, warnings), err
}

func validateParsed(mc *mcfgv1.MachineConfig, cfg ignition.Config, err error) (ignition.Config, error) {
	if err != nil {
		return ignition.Config{}, configErrors(mc.Name, err)
	}
	errs := validateIgnition(mc.Name, cfg)
	errs = append(errs, validateSpecFields(mc.Name, mc.Spec)...)
	return cfg, errs.OrNil()
}

func validateSpecFields(mc string, spec mcfgv1.MachineConfigSpec) Errors {
	var errs Errors
	switch spec.KernelType {
	case "", KernelTypeDefault, KernelTypeRealtime, KernelType64kPages:
	default:
		errs = append(errs, &Error{MachineConfig: mc, Field: "spec.kernelType",
			Reason: fmt.Sprintf("unknown kernel type %q (want %s, %s or %s)", spec.KernelType, KernelTypeDefault, KernelTypeRealtime, KernelType64kPages)})
	}
	for i, ext := range spec.Extensions {
		if _, ok := SupportedExtensions[ext]; !ok {
			errs = append(errs, &Error{MachineConfig: mc, Field: fmt.Sprintf("spec.extensions.%d", i),
				Reason: fmt.Sprintf("unsupported extension %q (supported: %s)", ext, strings.Join(supportedExtensionNames(), ", "))})
		}
	}
	return errs
}

// validateIgnition enforces what Ignition itself allows but a running node cannot honour.
func validateIgnition(mc string, cfg ignition.Config) Errors {
	var errs Errors
	// Field names are formatted only for a problem: a render checks thousands of files, every
	// render, cached parses included.
	for i, f := range cfg.Storage.Files {
		field := func() string { return fmt.Sprintf("spec.config.storage.files.%d", i) }
		if f.Mode != nil && (*f.Mode < 0 || *f.Mode > 0o777) {
			errs = append(errs, &Error{MachineConfig: mc, Field: field() + ".mode",
				Reason: fmt.Sprintf("mode %#o of %s has bits beyond 0777 (setuid, setgid and sticky are not allowed)", *f.Mode, f.Path)})
		}
		if f.Contents.Source != nil && !isInline(*f.Contents.Source) {
			errs = append(errs, &Error{MachineConfig: mc, Field: field() + ".contents.source",
				Reason: fmt.Sprintf("%s: only inline data: URLs are supported; remote sources cannot be applied to running nodes", f.Path)})
		}
		for j, a := range f.Append {
			if a.Source != nil && !isInline(*a.Source) {
				errs = append(errs, &Error{MachineConfig: mc, Field: fmt.Sprintf("%s.append.%d.source", field(), j),
					Reason: fmt.Sprintf("%s: only inline data: URLs are supported; remote sources cannot be applied to running nodes", f.Path)})
			}
		}
	}
	for i, d := range cfg.Storage.Directories {
		if d.Mode != nil && (*d.Mode < 0 || *d.Mode > 0o777) {
			errs = append(errs, &Error{MachineConfig: mc, Field: fmt.Sprintf("spec.config.storage.directories.%d.mode", i),
				Reason: fmt.Sprintf("mode %#o of %s has bits beyond 0777", *d.Mode, d.Path)})
		}
	}
	errs = append(errs, validatePaths(mc, cfg)...)
	return errs
}

// kernelFileSystems are where the kernel, not a disk, answers: a "file" there is a command to
// the running kernel (/proc/sysrq-trigger, /sys/power/state, a device node), never something a
// node keeps, and the agent must never write there.
var kernelFileSystems = []string{"/proc", "/sys", "/dev"}

// validatePaths refuses paths a node must never be given: into a kernel file system, or with
// control characters (a NUL cannot be in a path at all; a newline garbles every report naming
// it). Unit and dropin names become paths under /etc/systemd/system, so one holding a "/" (or
// being "." or "..") would put the file elsewhere.
func validatePaths(mc string, cfg ignition.Config) Errors {
	var errs Errors
	// The field is formatted only for a problem (see validateIgnition).
	check := func(list string, i int, p string) {
		if reason := PathProblem(p); reason != "" {
			errs = append(errs, &Error{MachineConfig: mc, Field: fmt.Sprintf("spec.config.storage.%s.%d.path", list, i), Reason: reason})
		}
	}
	for i, f := range cfg.Storage.Files {
		check("files", i, f.Path)
	}
	for i, d := range cfg.Storage.Directories {
		check("directories", i, d.Path)
	}
	for i, l := range cfg.Storage.Links {
		check("links", i, l.Path)
	}
	for i, u := range cfg.Systemd.Units {
		if reason := NameProblem("unit", u.Name); reason != "" {
			errs = append(errs, &Error{MachineConfig: mc, Field: fmt.Sprintf("spec.config.systemd.units.%d.name", i), Reason: reason})
		}
		for j, d := range u.Dropins {
			if reason := NameProblem("dropin", d.Name); reason != "" {
				errs = append(errs, &Error{MachineConfig: mc, Field: fmt.Sprintf("spec.config.systemd.units.%d.dropins.%d.name", i, j), Reason: reason})
			}
		}
	}
	return errs
}

// PathProblem says why a node must never be given path p (empty: it may). The agent checks
// it again before writing, since a rendered config made by an older controller was not
// checked.
func PathProblem(p string) string {
	if hasControl(p) {
		return fmt.Sprintf("path %q contains a control character", p)
	}
	if p == "/" {
		return "path / is the root itself: no file, directory or link can take its place"
	}
	if fs := KernelFileSystemOf(p); fs != "" {
		return fmt.Sprintf("%s is under %s, a kernel file system: a write there is a command to the running kernel, not a file, and is refused", p, fs)
	}
	return ""
}

// KernelFileSystemOf is the kernel file system (/proc, /sys, /dev) the clean absolute path p
// is in or names, "" for none. The agent asks it of where a symlink on the host leads too.
func KernelFileSystemOf(p string) string {
	for _, fs := range kernelFileSystems {
		if p == fs || strings.HasPrefix(p, fs+"/") {
			return fs
		}
	}
	return ""
}

// NameProblem says why n cannot name a unit or dropin (what) under /etc/systemd/system
// (empty: it can).
func NameProblem(what, n string) string {
	switch {
	case hasControl(n):
		return fmt.Sprintf("%s name %q contains a control character", what, n)
	case strings.Contains(n, "/") || n == "." || n == "..":
		return fmt.Sprintf("%s name %q is not a file name: it would be written outside %s", what, n, unitDir)
	}
	return ""
}

// unitDir is where the agent writes units and their dropins.
const unitDir = "/etc/systemd/system"

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func isInline(source string) bool {
	return source == "" || strings.HasPrefix(source, "data:")
}

func supportedExtensionNames() []string {
	names := make([]string, 0, len(SupportedExtensions))
	for n := range SupportedExtensions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
