package render

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/mco-dev/mco/internal/ignition"
)

// ParseRendered is ignition.Parse, remembered, and keeps no more than renderedLimit configs:
// rendered configs are megabytes parsed, and the controller makes a new one per change.
func TestParseRenderedIsParseAndKeepsFew(t *testing.T) {
	c := NewParseCache(16)
	for _, raw := range []string{
		ign35 + `,"storage":{"directories":[{"path":"/var/d"}]}}`,
		ign35 + `,"storage":{"files":[{"path":"relative"}]}}`,
		`not json`,
	} {
		want, wantErr := ignition.Parse([]byte(raw))
		for try := range 2 {
			got, err := c.ParseRendered([]byte(raw))
			if !reflect.DeepEqual(got, want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%s, try %d: got %+v, %v; ignition.Parse gives %+v, %v", raw, try, got, err, want, wantErr)
			}
		}
	}
	for i := range 3 * renderedLimit {
		if _, err := c.ParseRendered(fmt.Appendf(nil, ign35+`,"storage":{"directories":[{"path":"/var/d%d"}]}}`, i)); err != nil {
			t.Fatal(err)
		}
		if len(c.rendered) > renderedLimit {
			t.Fatalf("after %d configs the cache holds %d rendered configs, over %d", i+1, len(c.rendered), renderedLimit)
		}
	}
}
