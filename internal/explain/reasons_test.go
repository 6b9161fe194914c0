package explain

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// degradeCall is where the agent makes a failure (internal/daemon/failure.go):
// degraded("REASON", err), degradedRetrying("REASON", err) or &failure{..., eventReason: "REASON"},
// the event reason it emits as it reports the node Degraded or Unreconcilable.
var degradeCall = regexp.MustCompile(`(?:\bdegraded(?:Retrying)?\(|eventReason: )"(\w+)"`)

// agentReasons is a list kept by hand of reasons written as literals in internal/daemon; a
// reason added there and not here would make explain fall back to the bare state. This reads
// the agent's source so the two cannot drift apart.
func TestAgentReasonsCoverEveryDegradation(t *testing.T) {
	files, err := filepath.Glob("../daemon/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range degradeCall.FindAllSubmatch(src, -1) {
			found = append(found, string(m[1]))
		}
	}
	if len(found) < 5 {
		t.Fatalf("found only %q in internal/daemon's failures: has their form changed?", found)
	}
	for _, reason := range found {
		if !slices.Contains(agentReasons, reason) {
			t.Errorf("internal/daemon degrades with event reason %q, which agentReasons (problem.go) does not list", reason)
		}
	}
}
