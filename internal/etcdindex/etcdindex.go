package etcdindex

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/mco-dev/mco/internal/ignition"
)

// Variable is the template variable the index is bound to ({{.etcd_index}}), and the name of
// the server's query parameter.
const Variable = "etcd_index"

// IndexPath is where the server leaves the index it templated a machine's first config with;
// the node agent reads it to template every later config the same way.
const IndexPath = "/etc/machine-config-daemon/etcd-index"

// MaxIndex bounds the index: it fits an int on every platform and in the query parameter's
// usual parsers.
const MaxIndex = math.MaxInt32

// maxListed bounds the failures one error lists; the rest are counted.
const maxListed = 10

// ParseIndex reads an index as the query parameter or IndexPath gives it: a decimal integer
// from 0 to MaxIndex, digits only (no sign, spaces or base prefix).
func ParseIndex(raw string) (int, error) {
	switch {
	case raw == "":
		return 0, fmt.Errorf("%s is empty; it must be a non-negative integer", Variable)
	case strings.HasPrefix(raw, "-") && isDigits(raw[1:]):
		return 0, fmt.Errorf("%s %q is negative; it must be a non-negative integer", Variable, raw)
	case !isDigits(raw):
		return 0, fmt.Errorf("%s %q is not a non-negative integer", Variable, raw)
	}
	n, err := strconv.ParseUint(raw, 10, 64)
	if err != nil || n > MaxIndex {
		return 0, fmt.Errorf("%s %q is larger than %d", Variable, raw, MaxIndex)
	}
	return int(n), nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Error is one content that could not be templated.
type Error struct {
	// Content names it: file "/etc/x", file "/etc/x" append 0, unit "x.service", dropin
	// "10-a.conf" of unit "x.service".
	Content string
	Err     error
}

func (e *Error) Error() string { return e.Content + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Apply returns cfg with every content that refers to the index (RefersToIndex) executed with
// etcd_index = index, or an error listing each content that failed (an *Error each; errors.As
// finds the first). cfg is not modified: the file and unit lists are copied, and so is an append
// or dropin list before one of its entries changes. Every other content keeps its exact bytes,
// so a config without etcd_index templates comes back equal to cfg.
func Apply(cfg ignition.Config, index int) (ignition.Config, error) {
	data := map[string]any{Variable: index}
	var errs []error
	fail := func(content string, err error) {
		errs = append(errs, &Error{Content: content, Err: err})
	}

	cfg.Storage.Files = slices.Clone(cfg.Storage.Files)
	for i := range cfg.Storage.Files {
		f := &cfg.Storage.Files[i]
		name := fmt.Sprintf("file %q", f.Path)
		if r, changed, err := templateResource(f.Path, f.Contents, data); err != nil {
			fail(name, err)
		} else if changed {
			f.Contents = r
		}
		copied := false
		for j, a := range f.Append {
			r, changed, err := templateResource(f.Path, a, data)
			if err != nil {
				fail(fmt.Sprintf("%s append %d", name, j), err)
				continue
			}
			if changed {
				if !copied {
					f.Append, copied = slices.Clone(f.Append), true
				}
				f.Append[j] = r
			}
		}
	}

	cfg.Systemd.Units = slices.Clone(cfg.Systemd.Units)
	for i := range cfg.Systemd.Units {
		u := &cfg.Systemd.Units[i]
		unit := fmt.Sprintf("unit %q", u.Name)
		if u.Contents != nil {
			if out, changed, err := executeText(u.Name, *u.Contents, data); err != nil {
				fail(unit, err)
			} else if changed {
				u.Contents = &out
			}
		}
		copied := false
		for j, d := range u.Dropins {
			if d.Contents == nil {
				continue
			}
			out, changed, err := executeText(d.Name, *d.Contents, data)
			if err != nil {
				fail(fmt.Sprintf("dropin %q of %s", d.Name, unit), err)
				continue
			}
			if changed {
				if !copied {
					u.Dropins, copied = slices.Clone(u.Dropins), true
				}
				u.Dropins[j] = types.Dropin{Name: d.Name, Contents: &out}
			}
		}
	}

	if len(errs) > 0 {
		return ignition.Config{}, joinBounded(errs)
	}
	return cfg, nil
}

func joinBounded(errs []error) error {
	if len(errs) <= maxListed {
		return errors.Join(errs...)
	}
	listed := append(slices.Clone(errs[:maxListed]), fmt.Errorf("and %d more contents that cannot be templated", len(errs)-maxListed))
	return errors.Join(listed...)
}
