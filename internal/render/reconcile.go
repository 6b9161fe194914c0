package render

import (
	"fmt"
	"reflect"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
)

// ForceFilePath is the marker file that tells the node agent to skip its drift check; a
// MachineConfig must not be able to plant it on every node of a pool.
const ForceFilePath = "/run/machine-config-daemon-force"

// Violation is one change a running node cannot apply in place.
type Violation struct {
	// Field is the Ignition section, e.g. "storage.directories".
	Field string
	// Key identifies the entry within Field (a path or name), empty for whole-section changes.
	Key    string
	Reason string
}

func (v Violation) String() string {
	if v.Key == "" {
		return fmt.Sprintf("%s: %s", v.Field, v.Reason)
	}
	return fmt.Sprintf("%s %q: %s", v.Field, v.Key, v.Reason)
}

// CheckReconcilable lists what in moving from the old to the new config cannot be done on a
// running node: disk layout, directories, added links, users other than core, changes of core
// other than SSH keys and password, groups, Ignition kernel arguments, appends, the force file,
// and FIPS. Files and units may change freely.
func CheckReconcilable(old, new ignition.Config, oldFIPS, newFIPS bool) []Violation {
	var vs []Violation
	if oldFIPS != newFIPS {
		vs = append(vs, Violation{Field: "fips", Reason: "FIPS mode can only be chosen at install time"})
	}
	if !reflect.DeepEqual(old.KernelArguments, new.KernelArguments) {
		vs = append(vs, Violation{Field: "kernelArguments", Reason: "Ignition kernelArguments cannot change after install; use spec.kernelArguments"})
	}
	if !reflect.DeepEqual(old.Passwd.Groups, new.Passwd.Groups) {
		vs = append(vs, Violation{Field: "passwd.groups", Reason: "groups cannot change after install"})
	}
	vs = append(vs, userViolations(old.Passwd.Users, new.Passwd.Users)...)
	vs = append(vs, storageViolations(old.Storage, new.Storage)...)
	return vs
}

func userViolations(old, new []types.PasswdUser) []Violation {
	if reflect.DeepEqual(old, new) {
		return nil
	}
	var vs []Violation
	for _, u := range new {
		if u.Name != protocol.CoreUser {
			vs = append(vs, Violation{Field: "passwd.users", Key: u.Name, Reason: "only the core user can be configured after install"})
		}
	}
	oldCore, newCore := findUser(old, protocol.CoreUser), findUser(new, protocol.CoreUser)
	oldCore.SSHAuthorizedKeys, newCore.SSHAuthorizedKeys = nil, nil
	oldCore.PasswordHash, newCore.PasswordHash = nil, nil
	if !reflect.DeepEqual(oldCore, newCore) {
		vs = append(vs, Violation{Field: "passwd.users", Key: protocol.CoreUser, Reason: "only sshAuthorizedKeys and passwordHash of core can change after install"})
	}
	return vs
}

func findUser(users []types.PasswdUser, name string) types.PasswdUser {
	for _, u := range users {
		if u.Name == name {
			return u
		}
	}
	return types.PasswdUser{Name: name}
}

func storageViolations(old, new types.Storage) []Violation {
	var vs []Violation
	sections := []struct {
		field    string
		old, new any
	}{
		{"storage.disks", old.Disks, new.Disks},
		{"storage.filesystems", old.Filesystems, new.Filesystems},
		{"storage.raid", old.Raid, new.Raid},
		{"storage.luks", old.Luks, new.Luks},
	}
	for _, s := range sections {
		if !reflect.DeepEqual(s.old, s.new) {
			vs = append(vs, Violation{Field: s.field, Reason: "disk layout can only be set at install time"})
		}
	}
	oldDirs := map[string]types.Directory{}
	for _, d := range old.Directories {
		oldDirs[d.Path] = d
	}
	for _, d := range new.Directories {
		if prev, ok := oldDirs[d.Path]; !ok || !reflect.DeepEqual(prev, d) {
			vs = append(vs, Violation{Field: "storage.directories", Key: d.Path, Reason: "directories can only be created at install time"})
		}
		delete(oldDirs, d.Path)
	}
	for path := range oldDirs {
		vs = append(vs, Violation{Field: "storage.directories", Key: path, Reason: "directories can only be removed by reinstalling"})
	}
	oldLinks := map[string]types.Link{}
	for _, l := range old.Links {
		oldLinks[l.Path] = l
	}
	for _, l := range new.Links {
		if prev, ok := oldLinks[l.Path]; !ok || !reflect.DeepEqual(prev, l) {
			vs = append(vs, Violation{Field: "storage.links", Key: l.Path, Reason: "links can only be added at install time (removing one is allowed)"})
		}
	}
	for _, f := range new.Files {
		if len(f.Append) > 0 {
			vs = append(vs, Violation{Field: "storage.files", Key: f.Path, Reason: "append cannot be applied to a running node; set the whole contents"})
		}
		if f.Path == ForceFilePath {
			vs = append(vs, Violation{Field: "storage.files", Key: f.Path, Reason: "this marker disables the node agent's safety checks and cannot be set by a MachineConfig"})
		}
	}
	return vs
}

// culprit names the last MachineConfig, in merge order, that declares the violating key: the one
// an admin has to change. Empty when no source declares it (something was removed).
func culprit(v Violation, sources []parsedConfig) string {
	for i := len(sources) - 1; i >= 0; i-- {
		if declares(sources[i], v) {
			return sources[i].mc.Name
		}
	}
	return ""
}

func declares(p parsedConfig, v Violation) bool {
	c := p.ign
	switch v.Field {
	case "fips":
		return p.mc.Spec.FIPS
	case "kernelArguments":
		return len(c.KernelArguments.ShouldExist)+len(c.KernelArguments.ShouldNotExist) > 0
	case "passwd.groups":
		return len(c.Passwd.Groups) > 0
	case "passwd.users":
		return hasKey(c.Passwd.Users, v.Key, func(u types.PasswdUser) string { return u.Name })
	case "storage.disks":
		return len(c.Storage.Disks) > 0
	case "storage.filesystems":
		return len(c.Storage.Filesystems) > 0
	case "storage.raid":
		return len(c.Storage.Raid) > 0
	case "storage.luks":
		return len(c.Storage.Luks) > 0
	case "storage.directories":
		return hasKey(c.Storage.Directories, v.Key, func(d types.Directory) string { return d.Path })
	case "storage.links":
		return hasKey(c.Storage.Links, v.Key, func(l types.Link) string { return l.Path })
	case "storage.files":
		return hasKey(c.Storage.Files, v.Key, func(f types.File) string { return f.Path })
	}
	return false
}

func hasKey[T any](items []T, key string, keyOf func(T) string) bool {
	for _, it := range items {
		if keyOf(it) == key {
			return true
		}
	}
	return false
}
