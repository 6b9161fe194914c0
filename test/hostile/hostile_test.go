// Package hostile is issue 14's table of bad input: every entry point mco reads untrusted or
// hand-written data through is given malformed, oversized and malicious input, and each case
// expects a clear error naming the object, the field and the reason, and no change anywhere
// (no parsed output, no rendered config, no patch, the node root byte for byte as it was).
//
// One file per entry point holds its cases; TestHostileInput runs them all. Cases marked
// integration go through the real API server and controllers (testenv); under -short only
// the others run.
package hostile

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/testenv"
)

// hostileCase is one bad input given to one entry point.
type hostileCase struct {
	// entry names the entry point: the function, controller or endpoint under attack.
	entry string
	name  string
	// want are substrings the error must contain: the object, the field and the reason.
	want []string
	// run gives the input to the entry point, checks (and fails the test) that nothing
	// changed, and returns the error the entry point reported; nil means it was accepted.
	run func(t *testing.T) error
	// integration cases need the control plane.
	integration bool
}

func allCases() []hostileCase {
	return slices.Concat(ignitionCases(), renderCases(), selectorCases(), agentCases(),
		serverCases(), bootImageCases(), manifestCases())
}

func TestHostileInput(t *testing.T) {
	for _, c := range allCases() {
		t.Run(c.entry+"/"+c.name, func(t *testing.T) {
			if c.integration {
				testenv.Integration(t)
			}
			err := c.run(t)
			if err == nil {
				t.Fatal("accepted")
			}
			t.Log(err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestTableSize keeps the table at the floor of 40 cases and logs how they spread
// over the entry points.
func TestTableSize(t *testing.T) {
	byEntry := map[string]int{}
	names := map[string]bool{}
	cases := allCases()
	for _, c := range cases {
		byEntry[c.entry]++
		key := c.entry + "/" + c.name
		if names[key] {
			t.Errorf("case %s appears twice", key)
		}
		names[key] = true
		if len(c.want) < 2 {
			t.Errorf("case %s checks fewer than two parts of its error", key)
		}
	}
	if len(cases) < 40 {
		t.Errorf("%d cases; the table must hold at least 40", len(cases))
	}
	entries := make([]string, 0, len(byEntry))
	for e := range byEntry {
		entries = append(entries, e)
	}
	sort.Strings(entries)
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "\n  %-40s %d", e, byEntry[e])
	}
	t.Logf("%d cases:%s", len(cases), b.String())
}
