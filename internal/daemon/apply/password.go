package apply

import (
	"bytes"
	"strings"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/protocol"
)

// lockedPassword is the shadow hash of an account that cannot log in with a password.
const lockedPassword = "*"

// password sets core's hash in the root's shadow file when the config says so. A config that
// stops setting a hash returns core to its original hash (recorded the first time), or locks
// the password when there is no record.
func (p *planner) password(old, new nodefiles.Set) error {
	if new.CorePassword == nil && old.CorePassword == nil {
		return nil
	}
	if !p.acc.HasUser(protocol.CoreUser) {
		return nil
	}
	info, err := p.root.Lstat(ShadowPath)
	if err != nil || info.Type != noderoot.Regular {
		return err
	}
	shadow, err := p.root.ReadFile(ShadowPath)
	if err != nil {
		return err
	}
	current, ok := shadowHash(shadow, protocol.CoreUser)
	if !ok {
		return nil
	}
	want, err := p.wantedHash(old, new, current)
	if err != nil {
		return err
	}
	if want == current {
		return nil
	}
	p.ops = append(p.ops, op{kind: opWrite, path: ShadowPath, data: setShadowHash(shadow, protocol.CoreUser, want),
		opts: noderoot.WriteOptions{Perm: info.Perm, UID: info.UID, GID: info.GID, Deferred: true}})
	return nil
}

func (p *planner) wantedHash(old, new nodefiles.Set, current string) (string, error) {
	origExists, err := p.root.Exists(CorePasswordOrig)
	if err != nil {
		return "", err
	}
	if new.CorePassword != nil {
		if !origExists {
			p.ops = append(p.ops, op{kind: opWrite, path: CorePasswordOrig, data: []byte(current), parents: noderoot.DefaultDir,
				opts: noderoot.WriteOptions{Perm: 0o600, Deferred: true}})
		}
		if *new.CorePassword == "" {
			// An empty hash in /etc/shadow logs core in without any password. OpenShift and
			// Ignition take passwordHash "" to mean no password, and lock it.
			return lockedPassword, nil
		}
		return *new.CorePassword, nil
	}
	if !origExists {
		return lockedPassword, nil
	}
	orig, err := p.root.ReadFile(CorePasswordOrig)
	if err != nil {
		return "", err
	}
	p.ops = append(p.ops, op{kind: opRemove, path: CorePasswordOrig})
	return string(orig), nil
}

func shadowHash(shadow []byte, user string) (string, bool) {
	for _, line := range strings.Split(string(shadow), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) >= 2 && f[0] == user {
			return f[1], true
		}
	}
	return "", false
}

func setShadowHash(shadow []byte, user, hash string) []byte {
	lines := bytes.Split(shadow, []byte("\n"))
	for i, line := range lines {
		f := strings.SplitN(string(line), ":", 3)
		if len(f) >= 2 && f[0] == user {
			f[1] = hash
			lines[i] = []byte(strings.Join(f, ":"))
		}
	}
	return bytes.Join(lines, []byte("\n"))
}

// CorePasswordSatisfied reports whether root's shadow already gives core the hash set asks
// for: true when set asks for none, or the host has no core user (the entry would not apply).
func CorePasswordSatisfied(root *noderoot.Root, set nodefiles.Set) (bool, error) {
	if set.CorePassword == nil {
		return true, nil
	}
	acc, err := root.LoadAccounts()
	if err != nil || !acc.HasUser(protocol.CoreUser) {
		return err == nil, err
	}
	shadow, err := root.ReadFile(ShadowPath)
	if err != nil {
		return false, err
	}
	current, ok := shadowHash(shadow, protocol.CoreUser)
	want := *set.CorePassword
	if want == "" {
		want = lockedPassword
	}
	return ok && current == want, nil
}
