package noderoot

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Accounts are the users and groups of the node root (its /etc/passwd and /etc/group), not
// of the machine the agent binary happens to run on.
type Accounts struct {
	users  map[string]int
	groups map[string]int
	// userGroup is each user's primary group id.
	userGroup map[string]int
}

// LoadAccounts reads <root>/etc/passwd and <root>/etc/group; missing files mean no accounts.
func (r *Root) LoadAccounts() (*Accounts, error) {
	a := &Accounts{users: map[string]int{}, groups: map[string]int{}, userGroup: map[string]int{}}
	if err := r.readColonFile("/etc/passwd", func(f []string) {
		if len(f) >= 4 {
			if uid, err := strconv.Atoi(f[2]); err == nil {
				a.users[f[0]] = uid
			}
			if gid, err := strconv.Atoi(f[3]); err == nil {
				a.userGroup[f[0]] = gid
			}
		}
	}); err != nil {
		return nil, err
	}
	if err := r.readColonFile("/etc/group", func(f []string) {
		if len(f) >= 3 {
			if gid, err := strconv.Atoi(f[2]); err == nil {
				a.groups[f[0]] = gid
			}
		}
	}); err != nil {
		return nil, err
	}
	return a, nil
}

func (r *Root) readColonFile(p string, each func([]string)) error {
	info, err := r.Lstat(p)
	if err != nil || info.Type == Missing {
		return err
	}
	data, err := r.ReadFile(p)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		each(strings.Split(line, ":"))
	}
	return sc.Err()
}

// HasUser reports whether the root knows the user.
func (a *Accounts) HasUser(name string) bool { _, ok := a.users[name]; return ok }

// UID resolves a user name.
func (a *Accounts) UID(name string) (int, error) {
	if id, ok := a.users[name]; ok {
		return id, nil
	}
	return 0, fmt.Errorf("user %q not found in the node's /etc/passwd", name)
}

// GID resolves a group name.
func (a *Accounts) GID(name string) (int, error) {
	if id, ok := a.groups[name]; ok {
		return id, nil
	}
	return 0, fmt.Errorf("group %q not found in the node's /etc/group", name)
}

// PrimaryGID is the user's login group.
func (a *Accounts) PrimaryGID(user string) (int, error) {
	if id, ok := a.userGroup[user]; ok {
		return id, nil
	}
	return 0, fmt.Errorf("user %q not found in the node's /etc/passwd", user)
}
