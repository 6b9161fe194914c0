package osimage

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
)

// CanonicalKernelType maps "" to "default".
func CanonicalKernelType(t string) string {
	if t == "" {
		return KernelTypeDefault
	}
	return t
}

// ParseCmdline splits a kernel command line on whitespace; a double-quoted part may hold
// spaces and stays in the argument with its quotes, as the kernel shows it in /proc/cmdline.
// The result is never nil: an empty command line is known to be empty.
func ParseCmdline(s string) []string {
	out := []string{}
	var cur strings.Builder
	inQuote, inArg := false, false
	for _, r := range s {
		switch {
		case r == '"':
			inQuote = !inQuote
			cur.WriteRune(r)
			inArg = true
		case !inQuote && (r == ' ' || r == '\t' || r == '\n' || r == '\r'):
			if inArg {
				out = append(out, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if inArg {
		out = append(out, cur.String())
	}
	return out
}

// splitArgs is a config's kernelArguments one argument per element: an entry may hold several
// ("a=1 b" is two).
func splitArgs(entries []string) []string {
	out := []string{}
	for _, e := range entries {
		out = append(out, ParseCmdline(e)...)
	}
	return out
}

// sameList treats nil and empty alike and compares in order.
func sameList(a, b []string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return slices.Equal(a, b)
}

// ChangeBetween is what differs between two configs. An osImageURL that becomes empty keeps
// the image; kernel type "" is "default"; kernel arguments and extensions compare as ordered
// lists (nil and empty alike), as the reboot plan compares them.
func ChangeBetween(old, new mcfgv1.MachineConfigSpec) Change {
	c := Change{KernelType: CanonicalKernelType(new.KernelType)}
	if new.OSImageURL != "" && new.OSImageURL != old.OSImageURL {
		c.OSImageURL = new.OSImageURL
	}
	if !sameList(old.KernelArguments, new.KernelArguments) {
		c.KernelArgs = true
		c.OldKernelArgs, c.NewKernelArgs = splitArgs(old.KernelArguments), splitArgs(new.KernelArguments)
	}
	c.KernelTypeChanged = CanonicalKernelType(old.KernelType) != c.KernelType
	if !sameList(old.Extensions, new.Extensions) {
		c.ExtensionsChanged = true
		c.OldExtensions, c.NewExtensions = slices.Clone(old.Extensions), slices.Clone(new.Extensions)
	}
	return c
}

// Needed is what has to be staged to get from what booted to spec (a first boot, or a forced
// update): one change for each field Verify finds not in effect, FIPS aside (nothing can stage
// it). Kernel arguments: Old and New are both all of spec's arguments, so every backend removes
// any copy already staged and appends each once (staging twice leaves them once; bootc's
// per-source set gets them all). Extensions: the whole wanted set.
func Needed(spec mcfgv1.MachineConfigSpec, b Booted) Change {
	c := Change{KernelType: CanonicalKernelType(spec.KernelType)}
	for _, m := range Verify(spec, b) {
		switch m.Field {
		case FieldOSImageURL:
			c.OSImageURL = spec.OSImageURL
		case FieldKernelArguments:
			want := splitArgs(spec.KernelArguments)
			c.KernelArgs, c.OldKernelArgs, c.NewKernelArgs = true, want, slices.Clone(want)
		case FieldKernelType:
			c.KernelTypeChanged = true
		case FieldExtensions:
			c.ExtensionsChanged, c.NewExtensions = true, slices.Clone(spec.Extensions)
		}
	}
	return c
}

func missingFrom(want, have []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			out = append(out, w)
		}
	}
	return out
}

// UnsupportedError is a field this host cannot apply.
type UnsupportedError struct {
	Field, Value, Backend, Reason string
}

func (e *UnsupportedError) Error() string {
	value := "(none)"
	if e.Value != "" {
		value = fmt.Sprintf("%q", e.Value)
	}
	return fmt.Sprintf("%s: %s cannot be applied on this host: OS backend %q %s; nothing was written",
		e.Field, value, e.Backend, e.Reason)
}

// Refuse returns nil, or an *UnsupportedError for the first field (in the Field constants'
// order) that c changes and b cannot apply; also for a config that wants FIPS on a backend
// that cannot run it, an unknown extension or kernel type, and 64k-pages off aarch64.
func Refuse(b Backend, c Change, next mcfgv1.MachineConfigSpec) error {
	refuse := func(field, value, reason string) error {
		return &UnsupportedError{Field: field, Value: value, Backend: b.Name(), Reason: reason}
	}
	if c.OSImageURL != "" && !b.Supports(FieldOSImageURL) {
		return refuse(FieldOSImageURL, c.OSImageURL, "cannot switch OS images")
	}
	if c.KernelArgs && !b.Supports(FieldKernelArguments) {
		return refuse(FieldKernelArguments, strings.Join(c.NewKernelArgs, " "), "cannot change kernel arguments")
	}
	if c.ExtensionsChanged {
		if !b.Supports(FieldExtensions) {
			return refuse(FieldExtensions, strings.Join(c.NewExtensions, ", "), "cannot install or remove extensions")
		}
		for _, e := range c.NewExtensions {
			if _, ok := extensionPackages[e]; !ok {
				return refuse(FieldExtensions, e, "knows no such extension (known: "+strings.Join(KnownExtensions(), ", ")+")")
			}
		}
	}
	if c.KernelTypeChanged {
		t := CanonicalKernelType(c.KernelType)
		switch {
		case !b.Supports(FieldKernelType):
			return refuse(FieldKernelType, t, "has no way to switch kernels")
		case t != KernelTypeDefault && t != KernelTypeRealtime && t != KernelType64kPages:
			return refuse(FieldKernelType, t, "knows no such kernel type (known: default, realtime, 64k-pages)")
		case t == KernelType64kPages && runtime.GOARCH != "arm64":
			return refuse(FieldKernelType, t, "installs 64k-pages kernels only on aarch64 hosts, this one is "+runtime.GOARCH)
		}
	}
	if next.FIPS && !b.Supports(FieldFIPS) {
		return refuse(FieldFIPS, "true", "cannot run this host in FIPS mode")
	}
	return nil
}

// extensionPackages maps the extensions a config may name to the packages that provide them,
// as on Red Hat CoreOS.
var extensionPackages = map[string][]string{
	"two-node-ha":          {"pacemaker", "pcs", "fence-agents-all"},
	"ipsec":                {"NetworkManager-libreswan", "libreswan", "openvswitch3.5-ipsec"},
	"usbguard":             {"usbguard"},
	"kerberos":             {"krb5-workstation", "libkadm5"},
	"kernel-devel":         {"kernel-devel", "kernel-headers"},
	"sandboxed-containers": {"kata-containers"},
	"sysstat":              {"sysstat"},
	"wasm":                 {"crun-wasm"},
}

// KnownExtensions lists, sorted, the extension names a config may use.
func KnownExtensions() []string {
	out := make([]string, 0, len(extensionPackages))
	for e := range extensionPackages {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

// ExtensionPackages returns the packages of the named extensions, in order, without
// duplicates, and an error naming the first unknown one.
func ExtensionPackages(exts []string) ([]string, error) {
	var out []string
	for _, e := range exts {
		pkgs, ok := extensionPackages[e]
		if !ok {
			return nil, fmt.Errorf("unknown extension %q (known: %s)", e, strings.Join(KnownExtensions(), ", "))
		}
		for _, p := range pkgs {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// Mismatch is a config field the booted system does not have.
type Mismatch struct {
	Field, Want, Got string
}

func (m Mismatch) String() string {
	switch m.Field {
	case FieldKernelArguments:
		return fmt.Sprintf("%s: %q is not on the booted kernel command line", m.Field, m.Want)
	case FieldExtensions:
		if m.Got == "" {
			return fmt.Sprintf("%s: %q is not booted: this host's OS backend has no extensions", m.Field, m.Want)
		}
		return fmt.Sprintf("%s: %q is not booted (booted: %s)", m.Field, m.Want, m.Got)
	case FieldFIPS:
		return fmt.Sprintf("%s: the config wants FIPS mode, the booted kernel is not in FIPS mode", m.Field)
	}
	if m.Got == "" {
		return fmt.Sprintf("%s: booted none this host's OS backend can tell, config wants %q", m.Field, m.Want)
	}
	return fmt.Sprintf("%s: booted %q, config wants %q", m.Field, m.Got, m.Want)
}

// MismatchError names every field of config the booted system does not have.
func MismatchError(config string, ms []Mismatch) error {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
	}
	return fmt.Errorf("booted system does not match %s: %s", config, strings.Join(parts, "; "))
}

// Verify compares a config with what booted. Every kernel argument of spec (entries split on
// whitespace) must be on the booted command line (unknown: not checked); a non-empty
// osImageURL must be the booted image, so a host whose backend has no images fails it; the
// kernel type must be the booted one, and a non-default one fails where the backend cannot
// tell; every extension must be booted, and fails where the backend has none; FIPS must be on
// when spec wants it.
func Verify(spec mcfgv1.MachineConfigSpec, b Booted) []Mismatch {
	var out []Mismatch
	if spec.OSImageURL != "" && spec.OSImageURL != b.Image {
		out = append(out, Mismatch{Field: FieldOSImageURL, Want: spec.OSImageURL, Got: b.Image})
	}
	if b.KernelArgs != nil {
		for _, a := range missingFrom(splitArgs(spec.KernelArguments), b.KernelArgs) {
			out = append(out, Mismatch{Field: FieldKernelArguments, Want: a})
		}
	}
	if len(spec.Extensions) > 0 {
		got := ""
		if b.Extensions != nil {
			got = strings.Join(b.Extensions, ", ")
			if got == "" {
				got = "none"
			}
		}
		for _, e := range missingFrom(spec.Extensions, b.Extensions) {
			out = append(out, Mismatch{Field: FieldExtensions, Want: e, Got: got})
		}
	}
	want := CanonicalKernelType(spec.KernelType)
	if (b.KernelType != "" && b.KernelType != want) || (b.KernelType == "" && want != KernelTypeDefault) {
		out = append(out, Mismatch{Field: FieldKernelType, Want: want, Got: b.KernelType})
	}
	if spec.FIPS && !b.FIPS {
		out = append(out, Mismatch{Field: FieldFIPS, Want: "true", Got: "false"})
	}
	return out
}
