package bootimage

import (
	"errors"
	"fmt"
	"strings"

	"github.com/coreos/stream-metadata-go/stream"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"

	"github.com/mco-dev/mco/internal/protocol"
)

// Settings are the cluster-wide inputs of a decision.
type Settings struct {
	// DefaultArchitecture (a kubernetes.io/arch value) applies to MachineSets whose autoscaler
	// annotation declares none.
	DefaultArchitecture string
	// UseManagedUserData points MachineSets at <role>-user-data-managed instead of keeping their
	// own user-data Secret (the enhancement's original design).
	UseManagedUserData bool
}

// Decision is what to do with one MachineSet.
type Decision struct {
	// Skip, when set, means: leave the MachineSet alone. The other fields are then empty.
	Skip *Skip
	// Architecture is the stream architecture (x86_64, aarch64, ...) the MachineSet boots.
	Architecture string
	// ProviderSpec is the new providerSpec.value, set only when it differs from the current one.
	ProviderSpec []byte
	// UserDataSecret is the user-data Secret the (new) providerSpec references; "" for none.
	UserDataSecret string
}

// machineRoleLabel on a MachineSet's machine template names the role (worker, infra, ...).
const machineRoleLabel = "machine.openshift.io/cluster-api-machine-role"

// Decide computes what to do with an enrolled MachineSet. Errors mean the MachineSet is
// malformed; every deliberate "leave it alone" is a Decision with Skip.
func Decide(ms *machinev1beta1.MachineSet, st *stream.Stream, s Settings) (Decision, error) {
	if len(ms.OwnerReferences) > 0 {
		o := ms.OwnerReferences[0]
		return skipped(skipf(SkipOwned, "owned by %s %s; its owner manages the boot image", o.Kind, o.Name))
	}
	if ms.Spec.Template.Labels[OSIDLabel] == windowsOSID {
		return skipped(skipf(SkipWindows, "Windows machines do not boot CoreOS"))
	}
	kubeArch := kubeArchitecture(ms.Annotations)
	if kubeArch == "" {
		kubeArch = s.DefaultArchitecture
	}
	arch, ok := StreamArchitecture(kubeArch)
	if !ok {
		return skipped(skipf(SkipArchitecture, "unknown architecture %q", kubeArch))
	}
	value := ms.Spec.Template.Spec.ProviderSpec.Value
	if value == nil || len(value.Raw) == 0 {
		return Decision{}, &FieldError{Field: ProviderSpecField, Reason: "empty"}
	}
	raw, changed, err := UpdateProviderSpec(value.Raw, st, arch)
	var skip *Skip
	if errors.As(err, &skip) {
		return skipped(skip)
	}
	if err != nil {
		return Decision{}, err
	}
	if s.UseManagedUserData {
		var switched bool
		if raw, switched, err = pointAtManagedUserData(raw, ms.Spec.Template.Labels[machineRoleLabel]); err != nil {
			return Decision{}, err
		}
		changed = changed || switched
	}
	secret, err := userDataSecretName(raw)
	if err != nil {
		return Decision{}, err
	}
	d := Decision{Architecture: arch, UserDataSecret: secret}
	if changed {
		d.ProviderSpec = raw
	}
	return d, nil
}

func skipped(s *Skip) (Decision, error) { return Decision{Skip: s}, nil }

func userDataSecretName(raw []byte) (string, error) {
	m, err := decodeObject(raw)
	if err != nil {
		return "", &FieldError{Field: ProviderSpecField, Reason: err.Error()}
	}
	return doc{m: m, path: ProviderSpecField}.strAt("userDataSecret", "name")
}

// pointAtManagedUserData rewrites userDataSecret.name from <role>-user-data (the installer's) to
// <role>-user-data-managed (mco's). The role comes from the Secret name, else from the machine
// template's role label.
func pointAtManagedUserData(raw []byte, templateRole string) ([]byte, bool, error) {
	m, err := decodeObject(raw)
	if err != nil {
		return nil, false, &FieldError{Field: ProviderSpecField, Reason: err.Error()}
	}
	ref, ok, err := doc{m: m, path: ProviderSpecField}.object("userDataSecret")
	if err != nil || !ok {
		return raw, false, err
	}
	name, err := ref.str("name")
	if err != nil || name == "" {
		return raw, false, err
	}
	if _, managed := protocol.PoolOfManagedUserDataSecret(name); managed {
		return raw, false, nil
	}
	role, ok := strings.CutSuffix(name, "-user-data")
	if !ok {
		role = templateRole
	}
	if role == "" {
		return nil, false, fmt.Errorf("cannot tell the role of user-data Secret %q to point at its managed Secret", name)
	}
	ref.m["name"] = protocol.ManagedUserDataSecretName(role)
	return encodeIfChanged(raw, m)
}
