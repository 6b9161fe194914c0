package doctest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Block is one shell block of a page.
type Block struct {
	// File is the page's path relative to the repository; Line the fence's line (1-based).
	File string
	Line int
	// ID names a block that runs; Skip is the reason one does not.
	ID   string
	Skip string
	// Exit is the status the block's last command ends with (0 unless annotated: `mco plan`
	// exits 1 for a plan that drains or reboots); Timeout bounds the whole block.
	Exit    int
	Timeout time.Duration
	// Script is the block's text as the page shows it; Output the bare block after it ("" when
	// none), the output the page shows for it.
	Script string
	Output string
}

// Where says where the block is, as an editor jumps to it.
func (b Block) Where() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// DefaultTimeout bounds a block without a timeout= annotation.
const DefaultTimeout = 5 * time.Minute

var shellLanguages = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}

var annotationRE = regexp.MustCompile(`^<!--\s*doctest:\s*(.*?)\s*-->\s*$`)

// Parse returns every shell block of the markdown page src (file is how errors name it). A shell
// block without an annotation, an annotation not followed by a shell block, or one that does not
// parse is an error.
func Parse(file string, src []byte) ([]Block, error) {
	doc := goldmark.New().Parser().Parse(text.NewReader(src))
	lineOf := lineIndex(src)
	var blocks []Block
	var errs []string
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.HTMLBlock:
				if body, ok := annotation(c, src); ok {
					if next, isFence := c.NextSibling().(*ast.FencedCodeBlock); !isFence || !shellLanguages[string(next.Language(src))] && !isTranscript(next, src) {
						errs = append(errs, fmt.Sprintf("%s:%d: annotation %q is not followed by a shell block", file, lineOf(c.Lines().At(0).Start), body))
					}
				}
				continue
			case *ast.FencedCodeBlock:
				if !shellLanguages[string(c.Language(src))] && !isTranscript(c, src) {
					continue
				}
				b, err := block(file, src, c, lineOf)
				if err != nil {
					errs = append(errs, err.Error())
					continue
				}
				blocks = append(blocks, b)
				continue
			}
			walk(c)
		}
	}
	walk(doc)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return blocks, nil
}

func block(file string, src []byte, fence *ast.FencedCodeBlock, lineOf func(int) int) (Block, error) {
	b := Block{File: file, Line: fenceLine(src, fence, lineOf), Script: content(fence, src), Timeout: DefaultTimeout}
	prev, _ := fence.PreviousSibling().(*ast.HTMLBlock)
	var body string
	ok := false
	if prev != nil {
		body, ok = annotation(prev, src)
	}
	if !ok {
		return b, fmt.Errorf("%s: a shell block without `<!-- doctest: ID -->` or `<!-- doctest: skip: REASON -->` on the line before it", b.Where())
	}
	if reason, skip := strings.CutPrefix(body, "skip:"); skip {
		if b.Skip = strings.TrimSpace(reason); b.Skip == "" {
			return b, fmt.Errorf("%s: a skipped block must say why (`skip: REASON`)", b.Where())
		}
		return b, nil
	}
	fields := strings.Fields(body)
	if len(fields) == 0 || strings.Contains(fields[0], "=") {
		return b, fmt.Errorf("%s: annotation %q names no block ID", b.Where(), body)
	}
	b.ID = fields[0]
	for _, f := range fields[1:] {
		key, value, _ := strings.Cut(f, "=")
		var err error
		switch key {
		case "exit":
			b.Exit, err = strconv.Atoi(value)
		case "timeout":
			b.Timeout, err = time.ParseDuration(value)
		default:
			err = fmt.Errorf("unknown option (exit=N, timeout=DURATION)")
		}
		if err != nil {
			return b, fmt.Errorf("%s: annotation option %q: %v", b.Where(), f, err)
		}
	}
	if out, isFence := fence.NextSibling().(*ast.FencedCodeBlock); isFence && len(out.Language(src)) == 0 {
		b.Output = content(out, src)
	}
	return b, nil
}

// isTranscript: a block without a language whose first line is a prompt (`$ mco status`) shows
// commands a user types, with their output, and is held to the same rule as a shell block.
func isTranscript(fence *ast.FencedCodeBlock, src []byte) bool {
	return len(fence.Language(src)) == 0 && strings.HasPrefix(strings.TrimLeft(content(fence, src), " \n"), "$ ")
}

// annotation is the body of a `<!-- doctest: ... -->` comment.
func annotation(h *ast.HTMLBlock, src []byte) (string, bool) {
	var buf bytes.Buffer
	for i := 0; i < h.Lines().Len(); i++ {
		seg := h.Lines().At(i)
		buf.Write(seg.Value(src))
	}
	m := annotationRE.FindStringSubmatch(strings.TrimSpace(buf.String()))
	if m == nil {
		return "", false
	}
	return m[1], true
}

func content(fence *ast.FencedCodeBlock, src []byte) string {
	var buf bytes.Buffer
	for i := 0; i < fence.Lines().Len(); i++ {
		seg := fence.Lines().At(i)
		buf.Write(seg.Value(src))
	}
	return buf.String()
}

// fenceLine is the line of the opening fence: the line before the block's first content line
// (an empty block has none; then the line of its info string).
func fenceLine(src []byte, fence *ast.FencedCodeBlock, lineOf func(int) int) int {
	if fence.Lines().Len() > 0 {
		return lineOf(fence.Lines().At(0).Start) - 1
	}
	if fence.Info != nil {
		return lineOf(fence.Info.Segment.Start)
	}
	return 0
}

// lineIndex maps a byte offset of src to its 1-based line.
func lineIndex(src []byte) func(int) int {
	return func(off int) int { return bytes.Count(src[:off], []byte("\n")) + 1 }
}

// Pages are the pages whose shell blocks are checked, relative to the repository.
func Pages(repo string) ([]string, error) {
	pages := []string{"README.md"}
	for _, pattern := range []string{"docs/*.md", "docs/runbooks/*.md"} {
		m, err := filepath.Glob(filepath.Join(repo, pattern))
		if err != nil {
			return nil, err
		}
		for _, p := range m {
			rel, _ := filepath.Rel(repo, p)
			pages = append(pages, rel)
		}
	}
	return pages, nil
}

// Load parses every page of the repository and checks that run IDs are unique.
func Load(repo string) ([]Block, error) {
	pages, err := Pages(repo)
	if err != nil {
		return nil, err
	}
	var all []Block
	var errs []string
	seen := map[string]string{}
	for _, p := range pages {
		src, err := os.ReadFile(filepath.Join(repo, p))
		if err != nil {
			return nil, err
		}
		blocks, err := Parse(p, src)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		for _, b := range blocks {
			if b.ID != "" {
				if at, dup := seen[b.ID]; dup {
					errs = append(errs, fmt.Sprintf("%s: block ID %q is also used at %s", b.Where(), b.ID, at))
				}
				seen[b.ID] = b.Where()
			}
		}
		all = append(all, blocks...)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return all, nil
}
