package render

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

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
// running node, by OpenShift's rules (isConfigReconcilable): disk layout (disks, filesystems and
// raid unless allow lets them change; luks always), directories, links other than removing
// them all, users other than core, a core with anything but SSH keys and a password hash or
// with neither, groups, Ignition kernel arguments, appends, the force file, and FIPS. Files and
// units may change freely. Unlike OpenShift, listing the same directories or links in another
// order is no change (nothing on disk differs), and luks changes are refused (OpenShift does
// not look at them and so accepts what it never applies).
func CheckReconcilable(old, new ignition.Config, oldFIPS, newFIPS bool, allow Overrides) []Violation {
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
	vs = append(vs, storageViolations(old.Storage, new.Storage, allow)...)
	return vs
}

// userViolations applies OpenShift's rule to a change of the users: every user must be core,
// and core may carry only SSH keys and a password hash, at least one of them (else nobody
// could log in as core). Leaving core out of the config is no change to the user.
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
	core, ok := lookupUser(new, protocol.CoreUser)
	if !ok {
		return vs
	}
	rest := core
	rest.Name, rest.SSHAuthorizedKeys, rest.PasswordHash = "", nil, nil
	if !reflect.DeepEqual(rest, types.PasswdUser{}) {
		vs = append(vs, Violation{Field: "passwd.users", Key: protocol.CoreUser, Reason: "only sshAuthorizedKeys and passwordHash of core can be set after install"})
	}
	if len(core.SSHAuthorizedKeys) == 0 && core.PasswordHash == nil {
		vs = append(vs, Violation{Field: "passwd.users", Key: protocol.CoreUser,
			Reason: "core would have neither an SSH key nor a password hash, so nobody could log in as core; keep sshAuthorizedKeys or passwordHash"})
	}
	return vs
}

func lookupUser(users []types.PasswdUser, name string) (types.PasswdUser, bool) {
	for _, u := range users {
		if u.Name == name {
			return u, true
		}
	}
	return types.PasswdUser{}, false
}

func storageViolations(old, new types.Storage, allow Overrides) []Violation {
	var vs []Violation
	sections := []struct {
		field    string
		old, new any
		allowed  bool
	}{
		{"storage.disks", old.Disks, new.Disks, allow.Disks},
		{"storage.filesystems", old.Filesystems, new.Filesystems, allow.Filesystems},
		{"storage.raid", old.Raid, new.Raid, allow.Raid},
		{"storage.luks", old.Luks, new.Luks, false},
	}
	for _, s := range sections {
		if !s.allowed && !reflect.DeepEqual(s.old, s.new) {
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
	for _, path := range slices.Sorted(maps.Keys(oldDirs)) {
		vs = append(vs, Violation{Field: "storage.directories", Key: path, Reason: "directories can only be removed by reinstalling"})
	}
	vs = append(vs, linkViolations(old.Links, new.Links)...)
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

// linkViolations: links cannot be added or changed after install, and, as in OpenShift, removed
// only all at once (an upgrade once dropped every link; nothing else was meant to).
func linkViolations(old, new []types.Link) []Violation {
	var vs []Violation
	oldLinks := map[string]types.Link{}
	for _, l := range old {
		oldLinks[l.Path] = l
	}
	for _, l := range new {
		if prev, ok := oldLinks[l.Path]; !ok || !reflect.DeepEqual(prev, l) {
			vs = append(vs, Violation{Field: "storage.links", Key: l.Path, Reason: "links can only be added at install time (removing them all is allowed)"})
		}
		delete(oldLinks, l.Path)
	}
	if len(new) == 0 {
		return vs
	}
	for _, path := range slices.Sorted(maps.Keys(oldLinks)) {
		vs = append(vs, Violation{Field: "storage.links", Key: path,
			Reason: fmt.Sprintf("a link can only be removed together with all the others, and the new config keeps %d", len(new))})
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
