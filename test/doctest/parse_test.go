package doctest

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, page string
		want       []Block
		err        string
	}{
		{name: "a run block with its output", page: "# T\n\n<!-- doctest: plan exit=1 timeout=2m -->\n```sh\nmco plan -f x\n```\n```\nPOOL\n```\n",
			want: []Block{{File: "p.md", Line: 4, ID: "plan", Exit: 1, Timeout: 2 * time.Minute, Script: "mco plan -f x\n", Output: "POOL\n"}}},
		{name: "a skipped block", page: "<!-- doctest: skip: pushes to a registry -->\n```bash\ncrane push\n```\n",
			want: []Block{{File: "p.md", Line: 2, Skip: "pushes to a registry", Timeout: DefaultTimeout, Script: "crane push\n"}}},
		{name: "inside a list item", page: "- step:\n\n  <!-- doctest: a -->\n  ```sh\n  ls\n  ```\n",
			want: []Block{{File: "p.md", Line: 4, ID: "a", Timeout: DefaultTimeout, Script: "ls\n"}}},
		{name: "other languages need nothing", page: "```yaml\na: 1\n```\n```\nplain\n```\n"},
		{name: "a yaml block after a run block is not its output", page: "<!-- doctest: a -->\n```sh\nls\n```\n```yaml\na: 1\n```\n",
			want: []Block{{File: "p.md", Line: 2, ID: "a", Timeout: DefaultTimeout, Script: "ls\n"}}},
		{name: "a shell block without annotation", page: "text\n\n```sh\nls\n```\n", err: "p.md:3: a shell block without"},
		{name: "a transcript without annotation", page: "text\n\n```\n$ mco status\nPOOL\n```\n", err: "p.md:3: a shell block without"},
		{name: "a transcript skipped", page: "<!-- doctest: skip: a state the tour does not reach -->\n```\n$ mco status\n```\n",
			want: []Block{{File: "p.md", Line: 2, Skip: "a state the tour does not reach", Timeout: DefaultTimeout, Script: "$ mco status\n"}}},
		{name: "an annotation a paragraph away does not count", page: "<!-- doctest: a -->\n\ntext\n\n```sh\nls\n```\n", err: "p.md:1: annotation \"a\" is not followed by a shell block"},
		{name: "skip without a reason", page: "<!-- doctest: skip: -->\n```sh\nls\n```\n", err: "must say why"},
		{name: "an unknown option", page: "<!-- doctest: a retries=3 -->\n```sh\nls\n```\n", err: `option "retries=3"`},
		{name: "no ID", page: "<!-- doctest: exit=1 -->\n```sh\nls\n```\n", err: "names no block ID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse("p.md", []byte(tc.page))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("block %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestMatchOutput(t *testing.T) {
	plan := "POOL    RENDERED                 NODES ON                 NODES              DISRUPTION\n" +
		"worker  rendered-worker-6dd9a3…  rendered-worker-e9aacd…  worker-0,worker-1  drain+reboot\n" +
		"...\n" +
		"Why:\n" +
		"  CHANGE                 ACTIONS  RULE\n" +
		"  file /etc/chrony.conf  Reboot   no file policy matches\n" +
		"...\n"
	for _, tc := range []struct {
		name, shown, actual string
		err                 string
	}{
		{name: "columns of other widths and other hashes", shown: plan, actual: "POOL  RENDERED  NODES ON  NODES  DISRUPTION\n" +
			"worker rendered-worker-0a1b2c3d4e… rendered-worker-ffee00… worker-0,worker-1 drain+reboot\n" +
			"\nSummary: 2 nodes\n\nWhy:\n  CHANGE  ACTIONS  RULE\n  file /etc/chrony.conf Reboot no file policy matches\n\nFile /etc/chrony.conf (changed)\n"},
		{name: "a value that differs", shown: plan, actual: "POOL RENDERED NODES ON NODES DISRUPTION\nworker rendered-worker-0a1b2c… rendered-worker-ffee00… worker-0,worker-1 none\n",
			err: "has no first lines"},
		{name: "shown first lines must be first", shown: "B\n...\n", actual: "A\nB\n", err: "has no first lines"},
		{name: "a leading ... lets lines come before", shown: "...\nB\n", actual: "A\nB\n"},
		{name: "without a trailing ... the shown lines end it", shown: "A\n", actual: "A\nB\n", err: "goes on after"},
		{name: "lines between two ... are consecutive", shown: "...\nA\nC\n...\n", actual: "A\nB\nC\n", err: "has no lines"},
		{name: "a line ending in ... is a prefix", shown: "Next: the agent keeps watching the file; ...\n", actual: "Next: the agent keeps watching the file; and more\n"},
		{name: "times, durations and ages", shown: "waiting for window (in 3h12m) since 2026-11-23T11:48:00Z, 5s ago\n", actual: "waiting for window (in 59m59s) since 2027-01-02T03:04:05Z, 12m ago\n"},
		{name: "a placeholder is any value", shown: "image ghcr.io/mco-dev/mco:<tag> (loaded)\n", actual: "image ghcr.io/mco-dev/mco:v0.3.0-2-gabc (loaded)\n"},
		{name: "a node name is not a duration", shown: "worker-0\n", actual: "worker-1\n", err: "has no first lines"},
		{name: "a number is a number", shown: "403\n", actual: "200\n", err: "has no first lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := MatchOutput(tc.shown, tc.actual)
			if tc.err == "" && err != nil {
				t.Fatal(err)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}
