package drift

import (
	"testing"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
)

func TestBlocking(t *testing.T) {
	next := nodefiles.Set{Entries: []nodefiles.Entry{{Path: "/etc/kept.conf"}}}
	cases := []struct {
		name  string
		found *Error
		block bool
	}{
		{"missing file the next config drops", &Error{Path: "/etc/x/f", What: "missing file", Missing: true}, false},
		{"missing link the next config drops", &Error{Path: "/etc/l", What: "expected a symlink to /x", Missing: true}, false},
		{"missing file the next config keeps", &Error{Path: "/etc/kept.conf", What: "missing file", Missing: true}, true},
		{"changed file the next config drops", &Error{Path: "/etc/x/f", What: "content mismatch for file"}, true},
		{"wrong link the next config drops", &Error{Path: "/etc/l", What: "expected a symlink to /x"}, true},
		{"unit enablement", &Error{Path: "/etc/systemd/system/a.service", Unit: "a.service", What: "unit enablement mismatch", Missing: true}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := len(Blocking([]*Error{c.found}, next)) > 0; got != c.block {
				t.Errorf("blocking = %v, want %v", got, c.block)
			}
		})
	}
	all := []*Error{{Path: "/etc/x/f", Missing: true}, {Path: "/etc/kept.conf", What: "content mismatch for file"}}
	if got := Blocking(all, next); len(got) != 1 || got[0].Path != "/etc/kept.conf" {
		t.Errorf("Blocking(%v) = %v: one excused drift must not hide another", all, got)
	}
}
