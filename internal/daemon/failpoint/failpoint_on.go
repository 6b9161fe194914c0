//go:build failpoints

package failpoint

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Enabled says whether this build has the failpoints: it does (BuildTag).
const Enabled = true

var (
	hits    atomic.Int64
	killAt  = envInt(KillAtEnv)
	pauseAt = envInt(PauseAtEnv)
	holdAt  = envInt(HoldAtEnv)
	root    = "/"
)

func envInt(name string) int64 {
	n, _ := strconv.ParseInt(os.Getenv(name), 10, 64)
	return n
}

// Load takes an arming left in ArmFile under the node root nodeRoot, and removes it. It
// returns an error only for a file it cannot read or remove, or whose lines it does not know.
func Load(nodeRoot string) error {
	root = nodeRoot
	path := filepath.Join(nodeRoot, ArmFile)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		name, value, _ := strings.Cut(line, "=")
		n, err := strconv.ParseInt(value, 10, 64)
		switch {
		case err != nil || n < 1:
			return fmt.Errorf("%s: %q: want NAME=N, N >= 1", path, line)
		case name == KillAtEnv:
			killAt = n
		case name == PauseAtEnv:
			pauseAt = n
		case name == HoldAtEnv:
			holdAt = n
		default:
			return fmt.Errorf("%s: unknown failpoint %q (want %s, %s or %s)", path, name, KillAtEnv, PauseAtEnv, HoldAtEnv)
		}
	}
	return nil
}

// Hit marks a step boundary.
func Hit() {
	n := hits.Add(1)
	if killAt > 0 && n == killAt {
		now := float64(time.Now().UnixNano()) / 1e9
		_ = os.WriteFile(filepath.Join(root, FiredFile), []byte(fmt.Sprintf("killed KILL %.6f\n", now)), 0o644)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal arrives asynchronously
	}
	if pauseAt > 0 && n == pauseAt {
		_ = os.WriteFile(filepath.Join(root, PausedFile), []byte(strconv.FormatInt(pauseAt, 10)+"\n"), 0o644)
		select {}
	}
	if holdAt > 0 && n == holdAt {
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, syscall.SIGTERM)
		defer signal.Stop(stop)
		_ = os.WriteFile(filepath.Join(root, PausedFile), []byte(strconv.FormatInt(holdAt, 10)+"\n"), 0o644)
		<-stop
		now := float64(time.Now().UnixNano()) / 1e9
		_ = os.WriteFile(filepath.Join(root, FiredFile), []byte(fmt.Sprintf("held %d released TERM %.6f\n", holdAt, now)), 0o644)
	}
}
