package clustertest

import (
	"testing"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/ignition"
)

// TestFileConfigKeepsEveryCharacter: a data URL left unescaped loses what follows a '#' (a URL's
// fragment), which every chrony.conf and shell script has.
func TestFileConfigKeepsEveryCharacter(t *testing.T) {
	const content = "# comment (https://example.com/a?b=c#d)\nvalue 100% \"quoted\"\n"
	cfg, err := ignition.Parse(FileConfig("50-test", "/etc/test.conf", content).Spec.Config.Raw)
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := nodefiles.FileData(cfg, "/etc/test.conf")
	if err != nil || string(data) != content {
		t.Fatalf("the config writes %q (%v), want %q", data, err, content)
	}
}
