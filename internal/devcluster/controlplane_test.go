package devcluster

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

func TestProcessStateSaysWhatAProcessDoes(t *testing.T) {
	log := filepath.Join(t.TempDir(), "p.log")
	if err := os.WriteFile(log, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := processState(Process{PID: os.Getpid(), Log: log})
	if !regexp.MustCompile(`^state [RS] \((running|sleeping)\)(, waiting in \S+)?, 5 bytes logged$`).MatchString(got) {
		t.Errorf("processState of this test = %q", got)
	}
	if got := processState(Process{PID: 1 << 30, Log: filepath.Join(t.TempDir(), "none")}); got != "state unknown" {
		t.Errorf("processState of no process = %q", got)
	}
}
