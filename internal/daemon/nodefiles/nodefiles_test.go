package nodefiles

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"k8s.io/utils/ptr"

	"github.com/mco-dev/mco/internal/ignition"
)

// TestFromConfigRefusesPathsOutsideWhatANodeKeeps: the agent refuses, on its own, a config
// that would write into a kernel file system or a unit name that leaves the unit directory,
// even though render refuses them first (a config rendered by an older controller was not
// checked).
func TestFromConfigRefusesPathsOutsideWhatANodeKeeps(t *testing.T) {
	tests := []struct {
		name, config, want string
	}{
		{"file in /proc", `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/proc/sysrq-trigger","contents":{"source":"data:,b"}}]}}`, "/proc/sysrq-trigger is under /proc"},
		{"file in /sys", `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/sys/power/state","contents":{"source":"data:,off"}}]}}`, "/sys/power/state is under /sys"},
		{"device node", `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/dev/sda","contents":{"source":"data:,x"}}]}}`, "/dev/sda is under /dev"},
		{"unit name climbing out", `{"ignition":{"version":"3.4.0"},"systemd":{"units":[{"name":"../../../proc/x.service","contents":"[Unit]"}]}}`, `unit name "../../../proc/x.service" is not a file name`},
		{"dropin name climbing out", `{"ignition":{"version":"3.4.0"},"systemd":{"units":[{"name":"a.service","dropins":[{"name":"../../b.conf","contents":"[Unit]"}]}]}}`, `dropin name "../../b.conf" is not a file name`},
		{"a neighbour of /proc is fine", `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/process/x","contents":{"source":"data:,x"}}]}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ignition.Parse([]byte(tt.config))
			if err != nil {
				t.Fatal(err)
			}
			set, err := FromConfig(cfg)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			case tt.want != "" && len(set.Entries) != 0:
				t.Errorf("refused config still produced entries: %+v", set.Entries)
			}
		})
	}
}

// TestFromConfigRefusesACompressionBomb: a small gzip source that decompresses past
// ignition.MaxInlineDecompressed is refused, naming the file, instead of filling the agent's
// memory.
func TestFromConfigRefusesACompressionBomb(t *testing.T) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(make([]byte, ignition.MaxInlineDecompressed+1)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var cfg ignition.Config
	cfg.Storage.Files = []types.File{{Node: types.Node{Path: "/etc/bomb"}, FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{
		Source:      ptr.To("data:;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())),
		Compression: ptr.To("gzip"),
	}}}}
	if _, err := FromConfig(cfg); err == nil || !strings.Contains(err.Error(), "file /etc/bomb: gzip: decompresses to more than") {
		t.Fatalf("error %v", err)
	}
}
