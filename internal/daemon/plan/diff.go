package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
)

// Diff is what changed between the config a node is in and the one it moves to. Files and
// Units list keys added, removed or changed; the flags cover everything else a plan depends on.
type Diff struct {
	Files []string
	Units []string
	// SSHKeys and Password concern the core user only.
	SSHKeys  bool
	Password bool
	// Passwd is set when anything in passwd changed, another user's entry included: OpenShift
	// applies the sshkey policy to any change there, not only to core's keys and password.
	Passwd bool

	KernelArguments bool
	OSImageURL      bool
	Extensions      bool
	KernelType      bool
	FIPS            bool
	// Force is set when the admin asked for a full rewrite (the force file): every file and
	// unit is rewritten and the node reboots.
	Force bool
	// RebootPending is set when the config the node moves from was committed for a reboot
	// that has not happened yet: that reboot is still owed, whatever the move itself needs.
	RebootPending bool
	// RegistriesConf is registries.conf in both configs when it is among Files: the Special
	// action of its default policy decides the drain from the content (RegistriesConfDrain).
	RegistriesConf *Contents
}

// Contents is a file's data in the old and the new config; nil where a config has no such file.
type Contents struct {
	Old, New []byte
	// OldUnreadable and NewUnreadable say why that side's data could not be decoded.
	OldUnreadable, NewUnreadable string
}

// OSChanges names the fields that need an OS backend (rpm-ostree, bootc) to apply.
func (d Diff) OSChanges() []string {
	var out []string
	for _, c := range []struct {
		name    string
		changed bool
	}{
		{"osImageURL", d.OSImageURL}, {"kernelArguments", d.KernelArguments},
		{"extensions", d.Extensions}, {"kernelType", d.KernelType},
	} {
		if c.changed {
			out = append(out, c.name)
		}
	}
	return out
}

// DiffConfigs parses both MachineConfigs' Ignition and compares them. A nil old config is the
// empty config (a node that was never configured).
func DiffConfigs(old, new *mcfgv1.MachineConfig) (Diff, error) {
	oldIgn, err := parseMC(old)
	if err != nil {
		return Diff{}, err
	}
	newIgn, err := parseMC(new)
	if err != nil {
		return Diff{}, err
	}
	var oldSpec, newSpec mcfgv1.MachineConfigSpec
	if old != nil {
		oldSpec = old.Spec
	}
	if new != nil {
		newSpec = new.Spec
	}
	return DiffParsed(oldSpec, newSpec, oldIgn, newIgn), nil
}

// DiffParsed compares already parsed configs; the specs supply the non-Ignition fields.
func DiffParsed(oldSpec, newSpec mcfgv1.MachineConfigSpec, oldIgn, newIgn ignition.Config) Diff {
	oldCore, newCore := findUser(oldIgn.Passwd.Users, protocol.CoreUser), findUser(newIgn.Passwd.Users, protocol.CoreUser)
	files := changedKeys(oldIgn.Storage.Files, newIgn.Storage.Files, func(f types.File) string { return f.Path })
	var registries *Contents
	if slices.Contains(files, RegistriesConfPath) {
		registries = contentsOf(oldIgn, newIgn, RegistriesConfPath)
	}
	return Diff{
		Files:           files,
		RegistriesConf:  registries,
		Units:           changedKeys(oldIgn.Systemd.Units, newIgn.Systemd.Units, func(u types.Unit) string { return u.Name }),
		SSHKeys:         !sameList(oldCore.SSHAuthorizedKeys, newCore.SSHAuthorizedKeys),
		Password:        !reflect.DeepEqual(oldCore.PasswordHash, newCore.PasswordHash),
		Passwd:          !samePasswd(oldIgn.Passwd, newIgn.Passwd),
		KernelArguments: !sameList(oldSpec.KernelArguments, newSpec.KernelArguments),
		OSImageURL:      oldSpec.OSImageURL != newSpec.OSImageURL,
		Extensions:      !sameList(oldSpec.Extensions, newSpec.Extensions),
		KernelType:      kernelType(oldSpec.KernelType) != kernelType(newSpec.KernelType),
		FIPS:            oldSpec.FIPS != newSpec.FIPS,
	}
}

func contentsOf(oldIgn, newIgn ignition.Config, path string) *Contents {
	var c Contents
	var err error
	if c.Old, _, err = nodefiles.FileData(oldIgn, path); err != nil {
		c.OldUnreadable = fmt.Sprintf("the current config's %v", err)
	}
	if c.New, _, err = nodefiles.FileData(newIgn, path); err != nil {
		c.NewUnreadable = fmt.Sprintf("the new config's %v", err)
	}
	return &c
}

// samePasswd compares as JSON, where an empty list is no list: configs rendered at different
// times may spell "no users" either way, and that is no change to act on.
func samePasswd(a, b types.Passwd) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

func parseMC(mc *mcfgv1.MachineConfig) (ignition.Config, error) {
	if mc == nil {
		return ignition.Empty(), nil
	}
	cfg, err := ignition.Parse(mc.Spec.Config.Raw)
	if err != nil {
		return ignition.Config{}, fmt.Errorf("parsing Ignition config of %s: %w", mc.Name, err)
	}
	return cfg, nil
}

// changedKeys lists, sorted, the keys present in only one list or whose entries differ.
func changedKeys[T any](old, new []T, key func(T) string) []string {
	before := make(map[string]T, len(old))
	for _, o := range old {
		before[key(o)] = o
	}
	var out []string
	for _, n := range new {
		k := key(n)
		if o, ok := before[k]; !ok || !reflect.DeepEqual(o, n) {
			out = append(out, k)
		}
		delete(before, k)
	}
	for k := range before {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// sameList treats nil and empty alike, as OpenShift does for extensions and kernel arguments.
func sameList[T comparable](a, b []T) bool {
	return slices.Equal(a, b)
}

func kernelType(t string) string {
	if t == "" {
		return "default"
	}
	return t
}

func findUser(users []types.PasswdUser, name string) types.PasswdUser {
	for _, u := range users {
		if u.Name == name {
			return u
		}
	}
	return types.PasswdUser{Name: name}
}
