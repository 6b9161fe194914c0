package hostlayout

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mco-dev/mco/internal/containerdhosts"
	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/plan"
)

// Container runtimes, as the kubelet names them in the Node's
// status.nodeInfo.containerRuntimeVersion ("containerd://1.6.20", "cri-o://1.33.2").
const (
	RuntimeContainerd = "containerd"
	RuntimeCRIO       = "cri-o"
)

// Runtime is the node's container runtime as the files it reads depend on it.
type Runtime struct {
	// Name is RuntimeContainerd, RuntimeCRIO, or "" when the kubelet has not said.
	Name string
	// Version is the kubelet's report whole ("containerd://1.6.20").
	Version string
	// ContainerdConfig is /etc/containerd/config.toml on the host (nil: none); containerd only.
	ContainerdConfig []byte
}

// RuntimeOf reads the Node's containerRuntimeVersion.
func RuntimeOf(containerRuntimeVersion string) Runtime {
	name, _, ok := strings.Cut(containerRuntimeVersion, "://")
	if !ok {
		name = ""
	}
	return Runtime{Name: name, Version: containerRuntimeVersion}
}

// DerivedError is a config this host's runtime cannot be given: what of it, and why.
type DerivedError struct {
	Runtime string
	// File is the config's file the runtime does not read ("": registries.conf).
	File string
	Err  error
}

func (e *DerivedError) Error() string {
	file := e.File
	if file == "" {
		file = plan.RegistriesConfPath
	}
	return fmt.Sprintf("this node's container runtime is %s, which does not read %s: %v", e.Runtime, file, e.Err)
}

func (e *DerivedError) Unwrap() error { return e.Err }

// Derive is what set needs besides its own entries on a host with runtime rt, sorted by path:
// on containerd, the hosts.toml files that give its pulls the mirrors and insecure registries
// the config's registries.conf gives CRI-O's (containerdhosts). The rendered config stays
// OpenShift's; these follow from it, per host. A setting containerd cannot express, or a
// containerd that does not read the files, is a *DerivedError: nothing is derived, and the
// config must be refused rather than applied without its mirrors.
func Derive(rt Runtime, set nodefiles.Set) ([]nodefiles.Entry, error) {
	if rt.Name != RuntimeContainerd {
		return nil, nil
	}
	if r := policyRestrictions(set); len(r) > 0 {
		return nil, &DerivedError{Runtime: RuntimeContainerd, File: PolicyJSONPath, Err: policyError(r)}
	}
	reg, ok := set.Lookup(plan.RegistriesConfPath)
	if !ok || reg.Link != "" {
		return nil, nil
	}
	files, err := containerdhosts.FromRegistriesConf(reg.Data)
	if err != nil {
		return nil, &DerivedError{Runtime: RuntimeContainerd, Err: err}
	}
	if len(files) == 0 {
		return nil, nil
	}
	if err := containerdhosts.CertsDirConfigured(rt.ContainerdConfig, rt.Version); err != nil {
		return nil, &DerivedError{Runtime: RuntimeContainerd, Err: fmt.Errorf("its mirrors need %s/<registry>/hosts.toml, which containerd does not read here: %w", containerdhosts.CertsDir, err)}
	}
	out := make([]nodefiles.Entry, 0, len(files))
	for _, f := range files {
		if _, clash := set.Lookup(f.Path); clash {
			return nil, &DerivedError{Runtime: RuntimeContainerd, Err: fmt.Errorf("a MachineConfig writes %s itself, and mco would derive it from registries.conf too: keep one", f.Path)}
		}
		out = append(out, nodefiles.Entry{Path: f.Path, Data: f.Data, Perm: uint32(f.Mode.Perm()), ParentPerm: 0o755})
	}
	return out, nil
}

// WithDerived is set with derived added, kept sorted by path (Lookup relies on it).
func WithDerived(set nodefiles.Set, derived []nodefiles.Entry) nodefiles.Set {
	if len(derived) == 0 {
		return set
	}
	entries := append(slices.Clone(set.Entries), derived...)
	slices.SortFunc(entries, func(a, b nodefiles.Entry) int { return strings.Compare(a.Path, b.Path) })
	set.Entries = entries
	return set
}

// AdjustDiff applies this host's runtime to a planned change: containerd reads hosts.toml on
// every pull and nothing on this host reads registries.conf as a daemon does (podman and
// skopeo read it per command), so neither asks for a reload, a drain or a reboot there;
// CRI-O's rules (the default policy's crio reload, or a drain for removed mirrors) are
// OpenShift's and stay.
func AdjustDiff(rt Runtime, d *plan.Diff) {
	if rt.Name != RuntimeContainerd {
		return
	}
	d.Files = slices.DeleteFunc(d.Files, func(p string) bool {
		return p == plan.RegistriesConfPath || strings.HasPrefix(p, containerdhosts.CertsDir+"/")
	})
	d.RegistriesConf = nil
}

// DerivedOnHost is what Derive gave set on a containerd host, as far as the host still has it:
// the derived files that exist with mco's header. `mco daemon revert` runs without the Node, so
// it cannot ask the kubelet for the runtime; the files say what was written.
func DerivedOnHost(set nodefiles.Set, read func(path string) ([]byte, error)) []nodefiles.Entry {
	reg, ok := set.Lookup(plan.RegistriesConfPath)
	if !ok || reg.Link != "" {
		return nil
	}
	files, err := containerdhosts.FromRegistriesConf(reg.Data)
	if err != nil {
		return nil // nothing was derived from it
	}
	var out []nodefiles.Entry
	for _, f := range files {
		if data, err := read(f.Path); err == nil && containerdhosts.GeneratedByMCO(data) {
			out = append(out, nodefiles.Entry{Path: f.Path, Data: f.Data, Perm: uint32(f.Mode.Perm()), ParentPerm: 0o755})
		}
	}
	return out
}

// crioUnit is CRI-O's service, which OpenShift's default policies reload or restart.
const crioUnit = "crio.service"

// AdjustPlan applies this host's runtime to a computed plan: on a containerd node there is no
// CRI-O to reload or restart for the files the default policies tie to it (policy.json,
// registries.d, ...): those actions are dropped, each cause saying so, rather than failing
// the update on a unit the node does not have.
func AdjustPlan(rt Runtime, p *plan.Plan) {
	if rt.Name != RuntimeContainerd {
		return
	}
	isCRIO := func(a plan.Action) bool {
		return (a.Type == plan.Reload || a.Type == plan.Restart) && a.Unit == crioUnit
	}
	p.Actions = slices.DeleteFunc(slices.Clone(p.Actions), isCRIO)
	causes := slices.Clone(p.Causes)
	for i, c := range causes {
		if slices.ContainsFunc(c.Actions, isCRIO) {
			c.Actions = slices.DeleteFunc(slices.Clone(c.Actions), isCRIO)
			c.Rule += " (no CRI-O on this containerd node: nothing to reload)"
			causes[i] = c
		}
	}
	p.Causes = causes
}
