package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"k8s.io/utils/ptr"

	"github.com/mco-dev/mco/internal/ignition"
)

// marshalIgnition must be json.Marshal byte for byte: rendered names are hashes of it. The
// configs are large enough to be split, and their strings hold what encoding/json escapes
// (HTML characters, U+2028, invalid UTF-8, quotes) and the placeholder's own JSON.
func TestMarshalIgnitionIsJSONMarshal(t *testing.T) {
	placeholder, err := json.Marshal(placeholderFile)
	if err != nil {
		t.Fatal(err)
	}
	tricky := []string{"plain", "<a href=\"x\">&</a>", "line\u2028sep", "bad\xffutf8", `"files":[` + string(placeholder) + `]`, "tab\tnl\n"}
	r := rand.New(rand.NewPCG(27, 3))
	for _, n := range []int{0, 1, filesPerWorker, 2*filesPerWorker - 1, 2 * filesPerWorker, 5003} {
		cfg := ignition.Empty()
		for i := range n {
			var f types.File
			f.Path = fmt.Sprintf("/etc/%d/%s", i, tricky[r.IntN(len(tricky))])
			f.Contents.Source = ptr.To("data:," + tricky[r.IntN(len(tricky))])
			if r.IntN(2) == 0 {
				f.Mode = ptr.To(0o644)
			}
			cfg.Storage.Files = append(cfg.Storage.Files, f)
		}
		cfg.Storage.Directories = []types.Directory{{Node: types.Node{Path: "/etc/" + tricky[r.IntN(len(tricky))]}}}
		cfg.Systemd.Units = []types.Unit{{Name: "a.service", Contents: ptr.To(tricky[r.IntN(len(tricky))])}}
		want, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalIgnition(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%d files: marshalIgnition differs from json.Marshal:\n%.300s\n%.300s", n, got, want)
		}
		if len(cfg.Storage.Files) != n || (n > 0 && cfg.Storage.Files[0].Path == placeholderFile.Path) {
			t.Fatalf("%d files: the caller's config was changed", n)
		}
	}
}
