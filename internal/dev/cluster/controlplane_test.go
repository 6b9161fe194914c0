package cluster

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	devnet "github.com/mco-dev/mco/internal/dev/network"
)

func TestProcessStateSaysWhatAProcessDoes(t *testing.T) {
	log := filepath.Join(t.TempDir(), "p.log")
	if err := os.WriteFile(log, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := processState(Process{PID: os.Getpid(), Log: log})
	if !regexp.MustCompile(`^state [RS] \((running|sleeping)\)(, waiting in [^0\s]\S*)?, 5 bytes logged$`).MatchString(got) {
		t.Errorf("processState of this test = %q", got)
	}
	if got := processState(Process{PID: 1 << 30, Log: filepath.Join(t.TempDir(), "none")}); got != "state unknown" {
		t.Errorf("processState of no process = %q", got)
	}
}

// TestWaitReadySaysTheCallersDeadlineEndedIt: a kube-apiserver that never answers ok, and a
// caller whose deadline ends the wait long before the wait's own 2 minutes.
func TestWaitReadySaysTheCallersDeadlineEndedIt(t *testing.T) {
	certs := pki{dir: t.TempDir(), network: devnet.Default()}
	if err := certs.create(); err != nil {
		t.Fatal(err)
	}
	notReady := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "[-]etcd failed", http.StatusInternalServerError)
	}))
	defer notReady.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err := waitReady(ctx, notReady.URL, certs, Process{PID: os.Getpid(), Log: filepath.Join(t.TempDir(), "none")})
	if err == nil || !strings.Contains(err.Error(), "caller's deadline ended the wait") || strings.Contains(err.Error(), "after 2m") {
		t.Errorf("waitReady under a 500 ms caller deadline: %v", err)
	}
}
