package adoption

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"
)

// MaxDiffed is the largest file whose contents are diffed: a plan is read by people, and a
// Node annotation is no place for large files.
const MaxDiffed = 8 << 10

// ContentDiff is the unified diff from the host's file to the config's, or why there is none.
// Contents are shown only when both sides are world-readable text: the plan is on the Node,
// which more people may read than the file on the host.
func ContentDiff(path string, host []byte, hostPerm uint32, want []byte, wantPerm uint32) (diff, note string) {
	switch {
	case hostPerm&0o004 == 0 || wantPerm&0o004 == 0:
		return "", "contents not shown: the file is not world-readable"
	case len(host) > MaxDiffed || len(want) > MaxDiffed:
		return "", "contents not shown: over 8 KiB"
	case !isText(host) || !isText(want):
		return "", "contents not shown: not text"
	}
	out, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(host)), B: difflib.SplitLines(string(want)),
		FromFile: "host" + path, ToFile: "config" + path, Context: 2,
	})
	if err != nil {
		return "", "contents not shown: " + err.Error()
	}
	return strings.TrimRight(out, "\n"), ""
}

func isText(b []byte) bool { return utf8.Valid(b) && !bytes.ContainsRune(b, 0) }
