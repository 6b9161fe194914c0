package cluster

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/mco-dev/mco/internal/dev/machine"
	devnet "github.com/mco-dev/mco/internal/dev/network"
)

// State is what DIR/state.json records: every process started, and the cluster's addresses.
type State struct {
	// Layout is how the cluster's machines are built (mco dev join follows it); "" is OpenShift's.
	Layout       Layout `json:"layout,omitempty"`
	APIServerURL string `json:"apiServerURL"`
	ServerURL    string `json:"serverURL"`
	// ToolsDir holds the kubelet and pause binaries new OS images carry, ImageArchive mco's
	// container image they preload.
	ToolsDir     string `json:"toolsDir"`
	ImageArchive string `json:"imageArchive"`
	// Manifests is the install's base (config/default), which upgrades apply again.
	Manifests string             `json:"manifests,omitempty"`
	Processes map[string]Process `json:"processes"`
	// Machines are the dev machines, in the order they were created.
	Machines []string `json:"machines,omitempty"`
	// NetworkSlot is which of the host's dev networks the cluster is on (devnet.Slot).
	NetworkSlot int `json:"networkSlot,omitempty"`
}

// Network is the cluster's address plan.
func (s *State) Network() devnet.Layout { return devnet.Slot(s.NetworkSlot) }

// ServerHost is where the cluster's machines reach the Machine Config Server: its api-int.
func (s *State) ServerHost() string {
	return net.JoinHostPort(s.Network().APIInt().String(), strconv.Itoa(devnet.APIIntPort))
}

// Process is one detached child.
type Process struct {
	PID  int      `json:"pid"`
	Args []string `json:"args"`
	Log  string   `json:"log"`
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

// LoadState reads DIR/state.json.
func LoadState(dir string) (*State, error) {
	data, err := os.ReadFile(statePath(dir))
	if err != nil {
		return nil, fmt.Errorf("no dev cluster in %s: %w", dir, err)
	}
	st := &State{}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("%s: %w", statePath(dir), err)
	}
	return st, nil
}

func (s *State) save(dir string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, statePath(dir))
}

// start runs bin detached in its own session (so it outlives `mco dev up` and a terminal's
// signals), logging to DIR/logs/<name>.log.
func (s *State) start(dir, name, bin string, args ...string) error {
	logPath := filepath.Join(dir, "logs", name+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	// Released, not waited for: the process is the cluster's, not this command's.
	pid := cmd.Process.Pid
	_ = cmd.Process.Release()
	s.Processes[name] = Process{PID: pid, Args: append([]string{bin}, args...), Log: logPath}
	return s.save(dir)
}

// Alive reports whether pid still runs (and is not a zombie).
func Alive(pid int) bool { return machine.Alive(pid) }

// stop ends one process: SIGTERM, then SIGKILL after grace; it returns once the process is gone.
func stop(p Process, grace time.Duration) error { return machine.Terminate(p.PID, grace) }
