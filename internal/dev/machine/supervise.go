package machine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// State of a machine as its supervisor reports it.
type State string

const (
	// Booting: the boot stage runs (InitPID is known); nothing may enter the machine yet, its
	// root is not yet its mount namespace's.
	Booting State = "booting"
	// Running: the boot stage presented the boot and became systemd.
	Running   State = "running"
	Rebooting State = "rebooting"
	Off       State = "off"
	// Orphaned: the supervisor is gone (killed outright) but the machine it booted still runs;
	// Stop, `mco dev down` or a new supervisor ends it.
	Orphaned State = "orphaned"
)

// Status is status.json: what the supervisor knows about its machine.
type Status struct {
	State State `json:"state"`
	// Boots counts boots since the machine was created (first boot = 1).
	Boots         int    `json:"boots"`
	InitPID       int    `json:"initPID,omitempty"`
	SupervisorPID int    `json:"supervisorPID"`
	Image         string `json:"image,omitempty"`
	Cmdline       string `json:"cmdline,omitempty"`
	// LastExit says how the previous boot ended: reboot, power loss, poweroff, or a failure.
	LastExit string    `json:"lastExit,omitempty"`
	Since    time.Time `json:"since"`
}

// Observed is the machine's state as its processes show it now: a supervisor killed outright
// never wrote its machine off, and may have left the machine running.
func (st Status) Observed() State {
	switch {
	case Alive(st.SupervisorPID):
		return st.State
	case isMachineInit(st.InitPID):
		return Orphaned
	}
	return Off
}

// systemd powers off on SIGRTMIN+4; glibc's SIGRTMIN is 34.
const sigPoweroff = syscall.Signal(34 + 4)

// PoweroffGrace bounds a clean poweroff before the supervisor cuts the power.
const PoweroffGrace = 30 * time.Second

// Supervise creates the machine's disk when it has none and boots the machine until it powers
// off or ctx ends (then it powers the machine off). It is the machine's firmware: each boot
// starts `mco dev machine boot` as PID 1 of new PID, mount, UTS and IPC namespaces.
func Supervise(ctx context.Context, c Config) error {
	if err := c.prepare(); err != nil {
		return err
	}
	st := Status{SupervisorPID: os.Getpid()}
	if old, err := ReadStatus(c.Dir); err == nil {
		st.Boots = old.Boots
		// A previous supervisor killed outright may have left its machine running on this disk.
		if err := killOrphan(old, c); err != nil {
			return err
		}
	}
	for {
		st.Boots++
		st.State, st.InitPID, st.Since = Booting, 0, time.Now()
		if err := c.writeStatus(st); err != nil {
			return err
		}
		ended, err := c.bootOnce(ctx, &st)
		st.LastExit = ended
		if err != nil || ctx.Err() != nil || ended == "poweroff" {
			st.State, st.InitPID, st.Since = Off, 0, time.Now()
			_ = c.writeStatus(st)
			return err
		}
		st.State = Rebooting
		_ = c.writeStatus(st)
	}
}

// bootOnce runs one boot and says how it ended.
func (c Config) bootOnce(ctx context.Context, st *Status) (string, error) {
	console, err := os.OpenFile(c.path(ConsoleFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", err
	}
	defer console.Close()
	fmt.Fprintf(console, "\n=== boot %d of %s at %s ===\n", st.Boots, c.Name, time.Now().Format(time.RFC3339))
	// The boot stage reports what it presented (image, command line) on a pipe before it
	// becomes systemd.
	facts, factsW, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer facts.Close()
	cmd := exec.Command(c.MCO, "dev", "machine", "boot", "--dir", c.Dir)
	cmd.Stdout, cmd.Stderr = console, console
	cmd.ExtraFiles = []*os.File{factsW} // bootFactsFD in the boot stage
	flags := syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC
	var netReady *os.File
	if c.Network != nil {
		// A fresh network namespace on every boot, as a machine's network state ends with it.
		flags |= syscall.CLONE_NEWNET
		netR, netW, err := os.Pipe()
		if err != nil {
			return "", err
		}
		defer netR.Close()
		netReady = netW
		cmd.ExtraFiles = append(cmd.ExtraFiles, netR) // netReadyFD in the boot stage
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: uintptr(flags)}
	err = cmd.Start()
	factsW.Close()
	if err != nil {
		if netReady != nil {
			netReady.Close()
		}
		return "", fmt.Errorf("booting %s: %w", c.Name, err)
	}
	if netReady != nil {
		msg := netReadyOK
		if err := c.Network.AttachNetwork(cmd.Process.Pid); err != nil {
			msg = err.Error()
			fmt.Fprintf(console, "=== plugging in the network of %s: %v ===\n", c.Name, err)
		}
		// The boot stage fails on anything but "ok": a machine without its network never boots.
		_, _ = netReady.WriteString(msg)
		netReady.Close()
	}
	st.InitPID, st.Image, st.Cmdline = cmd.Process.Pid, "", ""
	if err := c.writeStatus(*st); err != nil {
		_ = cmd.Process.Kill()
	}
	presented := make(chan BootChoice, 1)
	go func() {
		var b BootChoice
		if json.NewDecoder(facts).Decode(&b) == nil {
			presented <- b
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopping := false
	var werr error
wait:
	for {
		select {
		case b := <-presented:
			st.State, st.Since = Running, time.Now()
			st.Image, st.Cmdline = b.Image, b.Cmdline
			_ = c.writeStatus(*st)
		case werr = <-done:
			break wait
		case <-ctx.Done():
			stopping = true
			_ = cmd.Process.Signal(sigPoweroff)
			select {
			case werr = <-done:
			case <-time.After(PoweroffGrace):
				_ = cmd.Process.Kill()
				werr = <-done
			}
			break wait
		}
	}
	// Every process of the machine ended with its PID 1; its cgroups remain until removed.
	if err := c.removeCgroups(); err != nil {
		fmt.Fprintf(console, "=== removing the cgroups of %s: %v ===\n", c.Name, err)
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		return "", fmt.Errorf("%s: %v", c.Name, werr)
	case ws.Signaled() && ws.Signal() == syscall.SIGHUP:
		return "reboot", nil
	case ws.Signaled() && ws.Signal() == syscall.SIGINT, ws.Exited() && ws.ExitStatus() == 0:
		return "poweroff", nil
	case ws.Signaled() && ws.Signal() == syscall.SIGKILL:
		if stopping {
			return "power cut by the supervisor after " + PoweroffGrace.String(), nil
		}
		return "power loss", nil
	case ws.Exited():
		return "boot failed", fmt.Errorf("machine %s: boot failed (exit %d); see %s", c.Name, ws.ExitStatus(), c.path(ConsoleFile))
	}
	return "killed by " + ws.Signal().String(), nil
}

// prepare creates the disk (an ext4 file) and the mount points on the first start.
func (c Config) prepare() error {
	for _, d := range []string{"disk", "host", "root", "image"} {
		if err := os.MkdirAll(c.mnt(d), 0o755); err != nil {
			return err
		}
	}
	if _, err := os.Stat(c.path(diskFile)); err == nil {
		return nil
	}
	size := c.DiskSize
	if size == 0 {
		size = 1 << 30
	}
	tmp := c.path(diskFile + ".new")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-L", c.Name, tmp).CombinedOutput(); err != nil {
		return fmt.Errorf("creating the disk of %s: %w: %s", c.Name, err, out)
	}
	return os.Rename(tmp, c.path(diskFile))
}

func (c Config) writeStatus(st Status) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(c.path(statusFile), data, 0o644)
}

// ReadStatus reads a machine's status.json.
func ReadStatus(dir string) (Status, error) {
	var st Status
	data, err := os.ReadFile(dir + "/" + statusFile)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("%s/%s: %w", dir, statusFile, err)
	}
	return st, nil
}

// ErrNotRunning is returned when a command needs a running machine.
var ErrNotRunning = errors.New("machine is not running")
