package changeplan

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/pmezard/go-difflib/difflib"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/ignition"
)

// fileChanges describes each changed path: a diff of the decoded contents plus mode and owner,
// the way nodefiles would write them.
func fileChanges(oldIgn, newIgn ignition.Config, paths []string) []Change {
	out := make([]Change, 0, len(paths))
	for _, path := range paths {
		oldText, oldData, oldFound, oldErr := fileText(oldIgn, path)
		newText, newData, newFound, newErr := fileText(newIgn, path)
		c := Change{Name: path, Kind: kind(oldFound, newFound)}
		var errs []string
		for _, e := range []error{oldErr, newErr} {
			if e != nil {
				errs = append(errs, e.Error())
			}
		}
		c.Unreadable = strings.Join(errs, "; ")
		switch {
		case IsSecretPath(path):
			c.Hashed = "secret"
		case !printable(oldData) || !printable(newData):
			c.Hashed = "binary"
		}
		if c.Hashed != "" {
			if oldFound {
				c.OldSHA256 = sha(oldData)
			}
			if newFound {
				c.NewSHA256 = sha(newData)
			}
			oldText, newText = metadata(oldIgn, path), metadata(newIgn, path)
		}
		c.Diff = unified(path, oldText, newText, oldFound, newFound)
		out = append(out, c)
	}
	return out
}

// fileText is a file as text: mode and owner lines, then its decoded contents.
func fileText(cfg ignition.Config, path string) (text string, data []byte, found bool, err error) {
	data, found, err = nodefiles.FileData(cfg, path)
	if !found {
		return "", nil, false, nil
	}
	return metadata(cfg, path) + string(data), data, true, err
}

// metadata renders the attributes of a file that matter on the node, as header lines of its diff.
func metadata(cfg ignition.Config, path string) string {
	for _, f := range cfg.Storage.Files {
		if f.Path != path {
			continue
		}
		mode := "default"
		if f.Mode != nil {
			mode = fmt.Sprintf("%04o", *f.Mode)
		}
		return fmt.Sprintf("# mode: %s\n# owner: %s:%s\n", mode, owner(f.User.Name, f.User.ID), owner(f.Group.Name, f.Group.ID))
	}
	return ""
}

func owner(name *string, id *int) string {
	switch {
	case name != nil:
		return *name
	case id != nil:
		return fmt.Sprint(*id)
	}
	return "root"
}

func printable(data []byte) bool {
	return utf8.Valid(data) && !bytes.ContainsRune(data, 0)
}

// unitChanges describes each changed unit: enabled and masked state, contents and drop-ins.
func unitChanges(oldIgn, newIgn ignition.Config, names []string) []Change {
	out := make([]Change, 0, len(names))
	for _, name := range names {
		oldUnit, oldFound := findUnit(oldIgn, name)
		newUnit, newFound := findUnit(newIgn, name)
		out = append(out, Change{
			Name: name,
			Kind: kind(oldFound, newFound),
			Diff: unified(name, unitText(oldUnit, oldFound), unitText(newUnit, newFound), oldFound, newFound),
		})
	}
	return out
}

func findUnit(cfg ignition.Config, name string) (types.Unit, bool) {
	for _, u := range cfg.Systemd.Units {
		if u.Name == name {
			return u, true
		}
	}
	return types.Unit{}, false
}

func unitText(u types.Unit, found bool) string {
	if !found {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# enabled: %s\n# masked: %s\n", tristate(u.Enabled), tristate(u.Mask))
	if u.Contents != nil {
		b.WriteString(*u.Contents)
		if !strings.HasSuffix(*u.Contents, "\n") {
			b.WriteString("\n")
		}
	}
	for _, d := range u.Dropins {
		fmt.Fprintf(&b, "# drop-in %s.d/%s\n", u.Name, d.Name)
		if d.Contents != nil {
			b.WriteString(*d.Contents)
			if !strings.HasSuffix(*d.Contents, "\n") {
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

func tristate(b *bool) string {
	if b == nil {
		return "unset"
	}
	return fmt.Sprint(*b)
}

func kind(oldFound, newFound bool) string {
	switch {
	case !oldFound:
		return "added"
	case !newFound:
		return "removed"
	}
	return "changed"
}

// unified is a unified diff with three lines of context; /dev/null names a missing side.
func unified(name, old, new string, oldFound, newFound bool) string {
	from, to := "a"+name, "b"+name
	if !strings.HasPrefix(name, "/") {
		from, to = "a/"+name, "b/"+name
	}
	if !oldFound {
		from = "/dev/null"
	}
	if !newFound {
		to = "/dev/null"
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(old), B: lines(new),
		FromFile: from, ToFile: to, Context: 3,
	})
	if err != nil {
		return ""
	}
	return text
}

// lines splits text after each newline; unlike difflib.SplitLines it adds no empty last line,
// which would show as a blank context line in every diff.
func lines(text string) []string {
	out := strings.SplitAfter(text, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}
