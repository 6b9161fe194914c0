package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/mco-dev/mco/internal/dev/machine"
	devnet "github.com/mco-dev/mco/internal/dev/network"
)

// Processes a fault can be injected into, as state.json names them.
const (
	APIServerProcess = "kube-apiserver"
	EtcdProcess      = "etcd"
	// The Kubernetes controllers a real cluster runs beside the API server.
	ControllerManagerProcess = "kube-controller-manager"
	SchedulerProcess         = "kube-scheduler"
)

// Kill sends sig to the dev cluster's process name (kube-apiserver, etcd, ...)
// and waits up to timeout until it is gone. A process that already stopped is not an error.
func Kill(dir, name string, sig syscall.Signal, timeout time.Duration) error {
	st, err := LoadState(dir)
	if err != nil {
		return err
	}
	p, ok := st.Processes[name]
	if !ok {
		return fmt.Errorf("no process %q in %s", name, statePath(dir))
	}
	if !Alive(p.PID) {
		return nil
	}
	if err := syscall.Kill(p.PID, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("%s (pid %d): %w", name, p.PID, err)
	}
	if !machine.WaitGone(p.PID, timeout) {
		return fmt.Errorf("%s (pid %d) still runs %s after %s", name, p.PID, timeout, sig)
	}
	return nil
}

// Restart starts the stopped process name again with the arguments and log state.json
// records (same ports, same data directory), and records its new PID. For kube-apiserver it
// returns once the API server is ready; etcd must be running by then.
func Restart(ctx context.Context, dir, name string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	st, err := LoadState(dir)
	if err != nil {
		return err
	}
	p, ok := st.Processes[name]
	if !ok || len(p.Args) == 0 {
		return fmt.Errorf("no process %q in %s", name, statePath(dir))
	}
	if Alive(p.PID) {
		return fmt.Errorf("%s is still running (pid %d)", name, p.PID)
	}
	if f, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		fmt.Fprintf(f, "\n----- %s: restarted (pid %d had stopped)\n", time.Now().Format(time.RFC3339Nano), p.PID)
		f.Close()
	}
	if err := st.start(dir, name, p.Args[0], p.Args[1:]...); err != nil {
		return err
	}
	if name == APIServerProcess {
		return waitReady(ctx, st.APIServerURL, pki{dir: filepath.Join(dir, "pki")}, st.Processes[name])
	}
	return nil
}

// CutOff cuts machine name off the network (cut), or connects it again: what it sends to, or is
// sent from, the API server, the other machines and their pods is dropped on the way, as by a
// failed switch port (devnet.CutOffCommands). The machine runs on and sees its card up.
func CutOff(dir, name string, cut bool) error {
	st, err := LoadState(dir)
	if err != nil {
		return err
	}
	i := slices.Index(st.Machines, name)
	if i < 0 {
		return fmt.Errorf("no machine %q in %s", name, statePath(dir))
	}
	return devnet.CutOff(st.Network(), i, cut)
}

// ServerDown makes the cluster's Machine Config Server unreachable at api-int and at every
// machine's address (down), or reachable again: its process runs on, as behind a failed load
// balancer (devnet.ServerDownCommands).
func ServerDown(dir string, down bool) error {
	st, err := LoadState(dir)
	if err != nil {
		return err
	}
	return devnet.ServerDown(st.Network(), down)
}
