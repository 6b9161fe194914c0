package plan

import (
	"path/filepath"
	"strconv"
	"strings"

	operatorv1 "github.com/openshift/api/operator/v1"

	"github.com/mco-dev/mco/internal/kubeletfiles"
	"github.com/mco-dev/mco/internal/render"
)

// FilePolicy applies to a file path or, when Path is a directory, to everything below it.
type FilePolicy struct {
	Path    string
	Actions []Action
}

// UnitPolicy applies to one systemd unit, matched by exact name.
type UnitPolicy struct {
	Name    string
	Actions []Action
}

// Policies is what MachineConfiguration cluster says about updates, in the form the planner
// uses: its NodeDisruptionPolicy, and the irreconcilable changes it allows.
type Policies struct {
	Files  []FilePolicy
	Units  []UnitPolicy
	SSHKey []Action
	// Irreconcilable is spec.irreconcilableValidationOverrides, for render.CheckReconcilable.
	Irreconcilable render.Overrides
}

func reload(unit string) Action  { return Action{Type: Reload, Unit: unit} }
func restart(unit string) Action { return Action{Type: Restart, Unit: unit} }

var none = []Action{{Type: None}}

// DefaultPolicies are the built-in rules (OpenShift's cluster defaults, registries.conf's
// Special action included), under the admin's. One is mco's own: the kubelet's drop-in
// directory, where a KubeletConfig becomes a drop-in on pools without OpenShift's kubelet.conf;
// the kubelet reads its configuration only when it starts, so a restart puts a change in effect
// (OpenShift never writes there, and a kubelet.conf change reboots, as in OpenShift).
func DefaultPolicies() Policies {
	crio := []Action{reload("crio.service")}
	return Policies{
		Files: []FilePolicy{
			{"/var/lib/kubelet/config.json", none},
			{"/etc/machine-config-daemon/no-reboot/containers-gpg.pub", crio},
			{"/etc/containers/policy.json", crio},
			{RegistriesConfPath, []Action{{Type: Special}}},
			{"/etc/containers/registries.d", crio},
			{"/etc/crio/policies", crio},
			{"/etc/nmstate/openshift", none},
			{"/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt", []Action{restart("coreos-update-ca-trust.service"), restart("crio.service")}},
			{"/etc/kubernetes/credential-providers", []Action{restart("kubelet.service")}},
			{kubeletfiles.DropInDir, []Action{restart("kubelet.service")}},
			{"/etc/systemd/system/kubelet.service.d/40-kubelet-crio-image-credential-provider.conf", []Action{{Type: DaemonReload}, restart("kubelet.service")}},
			{"/etc/iri-registry", []Action{restart("iri-registry.service")}},
			{"/usr/local/bin/load-registry-image.sh", []Action{restart("iri-registry.service")}},
			{"/etc/pki/ca-trust/source/anchors/iri-root-ca.crt", []Action{restart("coreos-update-ca-trust.service")}},
		},
		Units: []UnitPolicy{
			{"iri-registry.service", []Action{{Type: DaemonReload}, restart("iri-registry.service")}},
		},
		SSHKey: none,
	}
}

// PoliciesFrom merges the admin's spec.nodeDisruptionPolicy of MachineConfiguration `cluster`
// over the defaults: an admin entry replaces the default with the same path or unit name, and
// admin sshkey actions replace the default ones. A nil spec gives the defaults.
func PoliciesFrom(spec *operatorv1.NodeDisruptionPolicyConfig) Policies {
	p := DefaultPolicies()
	if spec == nil {
		return p
	}
	for _, f := range spec.Files {
		p.Files = replaceOrAppend(p.Files, FilePolicy{Path: f.Path, Actions: fromSpec(f.Actions)},
			func(a, b FilePolicy) bool { return a.Path == b.Path })
	}
	for _, u := range spec.Units {
		p.Units = replaceOrAppend(p.Units, UnitPolicy{Name: string(u.Name), Actions: fromSpec(u.Actions)},
			func(a, b UnitPolicy) bool { return a.Name == b.Name })
	}
	if len(spec.SSHKey.Actions) > 0 {
		p.SSHKey = fromSpec(spec.SSHKey.Actions)
	}
	return p
}

func replaceOrAppend[T any](list []T, item T, same func(a, b T) bool) []T {
	for i := range list {
		if same(list[i], item) {
			list[i] = item
			return list
		}
	}
	return append(list, item)
}

func fromSpec(actions []operatorv1.NodeDisruptionPolicySpecAction) []Action {
	out := make([]Action, 0, len(actions))
	for _, a := range actions {
		act := Action{Type: ActionType(a.Type)}
		switch {
		case a.Reload != nil:
			act.Unit = string(a.Reload.ServiceName)
		case a.Restart != nil:
			act.Unit = string(a.Restart.ServiceName)
		}
		out = append(out, act)
	}
	return out
}

// filePolicy finds the policy covering path, as OpenShift's FindClosestFilePolicyPathMatch
// does: of the policies whose path is the file itself or a directory above it (pathCovers),
// the one whose path is longest as written, the first of equals.
func (p Policies) filePolicy(path string) (FilePolicy, bool) {
	var best FilePolicy
	found := false
	for _, f := range p.Files {
		if !pathCovers(f.Path, path) {
			continue
		}
		if !found || len(f.Path) > len(best.Path) {
			best, found = f, true
		}
	}
	return best, found
}

// pathCovers is OpenShift's rule: the policy's path as written is the file's, or the file lies
// below it once both are cleaned (filepath.Clean). So "/etc/foo/../bar", "//etc/bar" and
// "/etc/bar/." cover what is under /etc/bar (but not /etc/bar itself: the exact comparison is not
// cleaned), and "/" and "" cover no file at all ("/" cleans to the prefix "//", "" to the
// relative "./"): a file they were meant for falls back to the reboot of a file without a policy.
func pathCovers(policy, path string) bool {
	return policy == path || strings.HasPrefix(filepath.Clean(path), filepath.Clean(policy)+"/")
}

// coversNothing lists, quoted, the policy paths that cannot cover any file (absolute paths are
// all a config has), so a plan can say why such a policy did not apply.
func (p Policies) coversNothing() []string {
	var out []string
	for _, f := range p.Files {
		if clean := filepath.Clean(f.Path); clean == "/" || !filepath.IsAbs(clean) {
			out = append(out, strconv.Quote(f.Path))
		}
	}
	return out
}

func (p Policies) unitPolicy(name string) (UnitPolicy, bool) {
	for _, u := range p.Units {
		if u.Name == name {
			return u, true
		}
	}
	return UnitPolicy{}, false
}
