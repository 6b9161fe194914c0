package ignition

import (
	"bytes"
	"io"
	"reflect"
	"sort"

	gojson "github.com/ajeddeloh/go-json"
	v2errors "github.com/coreos/ignition/config/shared/errors"
	ign22types "github.com/coreos/ignition/config/v2_2/types"
	v2validate "github.com/coreos/ignition/config/validate"
	"github.com/coreos/ignition/config/validate/astnode"
	v2report "github.com/coreos/ignition/config/validate/report"
)

// maxLegacySize bounds spec 2.0 and 2.1 configs, which only the 2.x library reads: its checks
// locate every node by scanning the config from the start, so their cost grows with the square
// of the size (a 60 KB config takes 4 s, a 200 KB one 40 s). No OpenShift release wrote these specs.
const maxLegacySize = 32 << 10

// parseV22 is the 2.x library's parse of a spec 2.2.0 config (decode, then its checks with
// positions, unknown keys included) with one difference: positions come from an index of line
// starts, not from a scan of the config per node.
func parseV22(raw []byte) (ign22types.Config, v2report.Report, error) {
	var cfg ign22types.Config
	if err := gojson.Unmarshal(raw, &cfg); err != nil {
		return ign22types.Config{}, v2report.Report{}, err
	}
	var ast gojson.Node
	if err := gojson.Unmarshal(raw, &ast); err != nil {
		return ign22types.Config{}, v2report.Report{}, err
	}
	// The library reads positions only when given a source; the index ignores its content.
	rpt := v2validate.Validate(reflect.ValueOf(cfg), indexedNode{n: ast, lines: lineStarts(raw)}, bytes.NewReader(nil), true)
	if rpt.IsFatal() {
		return ign22types.Config{}, rpt, v2errors.ErrInvalid
	}
	return cfg, rpt, nil
}

// lineStarts are the offsets at which raw's lines start.
func lineStarts(raw []byte) []int {
	starts := []int{0}
	for i, b := range raw {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// indexedNode is the 2.x library's JSON node (astjson.JsonNode) with positions looked up in
// the line index: 1-based line and byte column of the offset just past the value (or key).
// (The library's own count makes first-line columns 0-based.)
type indexedNode struct {
	n     gojson.Node
	lines []int
}

func (v indexedNode) position(offset int, source io.ReadSeeker) (int, int, string) {
	if source == nil {
		return 0, 0, ""
	}
	line := sort.SearchInts(v.lines, offset+1) // lines starting at or before offset
	return line, offset - v.lines[line-1] + 1, ""
}

func (v indexedNode) ValueLineCol(source io.ReadSeeker) (int, int, string) {
	return v.position(v.n.End, source)
}

func (v indexedNode) KeyLineCol(source io.ReadSeeker) (int, int, string) {
	return v.position(v.n.KeyEnd, source)
}

func (v indexedNode) LiteralValue() interface{} { return v.n.Value }

func (v indexedNode) SliceChild(index int) (astnode.AstNode, bool) {
	if slice, ok := v.n.Value.([]gojson.Node); ok {
		return indexedNode{n: slice[index], lines: v.lines}, true
	}
	return indexedNode{}, false
}

func (v indexedNode) KeyValueMap() (map[string]astnode.AstNode, bool) {
	kv, ok := v.n.Value.(map[string]gojson.Node)
	if !ok {
		return nil, false
	}
	out := make(map[string]astnode.AstNode, len(kv))
	for k, n := range kv {
		out[k] = indexedNode{n: n, lines: v.lines}
	}
	return out, true
}

func (v indexedNode) Tag() string { return "json" }
