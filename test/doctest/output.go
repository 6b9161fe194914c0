package doctest

import (
	"fmt"
	"regexp"
	"strings"
)

// MatchOutput reports how actual differs from the output a page shows (expected), compared as a
// reader reads it:
//   - a line `...` stands for any number of lines; the shown lines between two such lines are
//     consecutive lines of actual, and without a leading (trailing) `...` they are its first
//     (last) lines;
//   - a line ending in ` ...` is a prefix of its line;
//   - runs of spaces are one space (columns are as wide as their values), and empty lines do not
//     count;
//   - what differs from run to run matches any value of its kind: a rendered config's hash
//     (`rendered-worker-6dd9a3…`), a time (`2026-11-23T11:48:00Z`), a duration (`12m`, `3h12m`)
//     and an age (`5s ago`); a `<placeholder>` without spaces matches any value.
func MatchOutput(expected, actual string) error {
	groups := splitGroups(expected)
	lines := splitLines(actual)
	pos := 0
	for gi, g := range groups {
		if len(g.lines) == 0 {
			continue
		}
		anchoredStart := gi == 0 && !g.gapBefore
		found := -1
		for start := pos; start+len(g.lines) <= len(lines); start++ {
			if matchesAt(g.lines, lines, start) {
				found = start
				break
			}
			if anchoredStart {
				break
			}
		}
		if found < 0 {
			return fmt.Errorf("the output has no %s\n%s\n(compared from its line %d; the whole output:)\n%s",
				map[bool]string{true: "first lines", false: "lines"}[anchoredStart], indent(g.raw), pos+1, indent(strings.Join(lines, "\n")))
		}
		pos = found + len(g.lines)
		if gi == len(groups)-1 && !g.gapAfter && pos != len(lines) {
			return fmt.Errorf("the output goes on after\n%s\n(shown as its end, without a `...` line):\n%s", indent(g.raw), indent(strings.Join(lines[pos:], "\n")))
		}
	}
	return nil
}

type group struct {
	lines               []*regexp.Regexp
	raw                 string
	gapBefore, gapAfter bool
}

// splitGroups cuts the shown output at its `...` lines.
func splitGroups(expected string) []group {
	lines := splitLines(expected)
	var groups []group
	cur := group{}
	var raw []string
	flush := func(gapAfter bool) {
		cur.gapAfter = gapAfter
		cur.raw = strings.Join(raw, "\n")
		groups = append(groups, cur)
		cur, raw = group{gapBefore: gapAfter}, nil
	}
	for _, l := range lines {
		if t := strings.TrimSpace(l); t == "..." || t == "…" {
			flush(true)
			continue
		}
		cur.lines = append(cur.lines, linePattern(l))
		raw = append(raw, l)
	}
	flush(false)
	return groups
}

// splitLines is s's lines without the empty ones: blank lines are layout, on the page and in
// a program's output alike.
func splitLines(s string) []string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, " \t\r"); strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

func matchesAt(pats []*regexp.Regexp, lines []string, start int) bool {
	for i, p := range pats {
		if !p.MatchString(lines[start+i]) {
			return false
		}
	}
	return true
}

var (
	spaceRE   = regexp.MustCompile(`[ \t]+`)
	volatiles = []struct{ shown, any *regexp.Regexp }{
		// A rendered config's name: its hash, whole or cut short with an ellipsis.
		{regexp.MustCompile(`(rendered-[a-z0-9-]*?-)[0-9a-f]{5,}(…)?`), regexp.MustCompile(`rendered-[a-z0-9-]*?-[0-9a-f]+…?`)},
		{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`), regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)},
	}
	anyDuration = `(\d+h)?(\d+m)?(\d+(\.\d+)?(s|ms))?`
)

// linePattern is the regular expression a shown line stands for.
func linePattern(shown string) *regexp.Regexp {
	s := strings.TrimSpace(spaceRE.ReplaceAllString(shown, " "))
	prefix := false
	if t, ok := strings.CutSuffix(s, " ..."); ok {
		s, prefix = t, true
	} else if t, ok := strings.CutSuffix(s, "..."); ok && strings.HasSuffix(t, ";") {
		s, prefix = t, true
	}
	var b strings.Builder
	b.WriteString(`^\s*`)
	for i, word := range strings.Split(s, " ") {
		if i > 0 {
			b.WriteString(`\s+`)
		}
		b.WriteString(wordPattern(word))
	}
	if !prefix {
		b.WriteString(`\s*$`)
	}
	return regexp.MustCompile(b.String())
}

// wordPattern matches one shown word, its volatile parts by kind.
func wordPattern(word string) string {
	var b strings.Builder
	for len(word) > 0 {
		loc, kind := firstVolatile(word)
		if loc == nil {
			b.WriteString(regexp.QuoteMeta(word))
			break
		}
		b.WriteString(regexp.QuoteMeta(word[:loc[0]]))
		b.WriteString(kind)
		word = word[loc[1]:]
	}
	return b.String()
}

// firstVolatile finds the first value in word that differs from run to run and the pattern of
// its kind.
func firstVolatile(word string) ([]int, string) {
	var best []int
	kind := ""
	consider := func(loc []int, k string) {
		if loc != nil && loc[1] > loc[0] && (best == nil || loc[0] < best[0]) {
			best, kind = loc, k
		}
	}
	consider(volatiles[0].shown.FindStringIndex(word), volatiles[0].any.String())
	consider(volatiles[1].shown.FindStringIndex(word), volatiles[1].any.String())
	consider(durationWords.FindStringIndex(word), anyDuration)
	consider(outputPlaceholder.FindStringIndex(word), `\S+`)
	return best, kind
}

// outputPlaceholder is a value the page leaves to the reader, as `<tag>` in
// `ghcr.io/mco-dev/mco:<tag>`: any value.
var outputPlaceholder = regexp.MustCompile(`<[A-Za-z][A-Za-z0-9._/-]*>`)

// durationWords are candidate durations: digits followed by h, m, s or ms, not inside a longer
// word (a node name such as worker-0 is not one).
var durationWords = regexp.MustCompile(`\b\d+(h\d+m(\d+s)?|h|m\d+s|m|(\.\d+)?s|ms)\b`)

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }
