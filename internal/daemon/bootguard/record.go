// Package bootguard is the boot guard's pure part: the records the agent and the host unit
// share, the unit itself, and the decisions over what each observes. A node rebooted for an
// update runs mco-boot-guard.service, which does not depend on the kubelet or a pod: if the
// kubelet is not running and healthy and the Node Ready within the pool's node boot timeout,
// it reverts that update's transaction and reboots into the previous config, once per target.
package bootguard

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mco-dev/mco/internal/daemon/apply"
)

// Files on the host (paths in the node root).
const (
	// RecordPath is the armed guard: written by the agent before it queues an update's reboot,
	// removed by the guard once the node is healthy, or after it reverted.
	RecordPath = apply.StateDir + "/boot-guard.json"
	// FailedPath is the guard's finding: the update it reverted (or could not), for the agent
	// to report. The agent removes it once the node's target changes or an admin retries.
	FailedPath = apply.StateDir + "/boot-failed"
	// UnitName is the host unit that runs the check at boot.
	UnitName  = "mco-boot-guard.service"
	UnitPath  = "/etc/systemd/system/" + UnitName
	WantsPath = "/etc/systemd/system/multi-user.target.wants/" + UnitName
	// BinaryPath is the copy of the agent's own node binary the unit runs. /usr/local is
	// writable on every host mco manages (on ostree hosts, FCOS and RHCOS, it is a link to
	// /var/usrlocal, where /usr itself is read-only), is labelled bin_t so systemd may execute
	// it under SELinux (a binary under /var/lib would be var_lib_t and refused), and a name of
	// its own keeps it apart from a host's /usr/local/bin/mco (dev machines bind their node
	// build there read-only).
	BinaryPath = "/usr/local/bin/mco-boot-guard"
)

// Record is the armed guard for one update from From to To.
type Record struct {
	// Node is the Node the guard reads (the agent's --node).
	Node string `json:"node"`
	From string `json:"from"`
	To   string `json:"to"`
	// Timeout is how long after the boot into To the node has to be healthy; TimeoutFrom says
	// where it comes from ("mcprollout/NAME" or "default").
	Timeout     Duration `json:"timeout"`
	TimeoutFrom string   `json:"timeoutFrom"`
	// ArmedAt is when the agent armed it; ArmedBootTime the kernel boot time (Unix seconds,
	// /proc/stat btime) of the boot it was armed in, for an admin reading the record. The
	// guard tells the armed boot from the next one by the reboot-pending record in /run,
	// which every boot starts without (dev machines share the host's kernel, and its btime).
	ArmedAt       time.Time `json:"armedAt"`
	ArmedBootTime int64     `json:"armedBootTime,omitempty"`
	// Previous is the rendered MachineConfig From, as the agent had it committed: the guard
	// reverts to it without the API server.
	Previous json.RawMessage `json:"previous"`
}

// Duration is a time.Duration written as "10m0s".
type Duration struct{ time.Duration }

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v <= 0 {
		return fmt.Errorf("timeout %q is not positive", s)
	}
	d.Duration = v
	return nil
}

// ParseRecord reads a Record, refusing one that lacks what the guard needs.
func ParseRecord(data []byte) (*Record, error) {
	r := &Record{}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("%s: %w", RecordPath, err)
	}
	switch {
	case r.To == "":
		return nil, fmt.Errorf("%s: no target config (to)", RecordPath)
	case r.From == "" || len(r.Previous) == 0:
		return nil, fmt.Errorf("%s: no previous config (from, previous) to revert to", RecordPath)
	case r.Timeout.Duration <= 0:
		return nil, fmt.Errorf("%s: no timeout", RecordPath)
	}
	return r, nil
}

// Failure is the content of FailedPath.
type Failure struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Check is the check that failed, in words ("kubelet not healthy within 10m0s after the
	// reboot into rendered-worker-1"); Evidence what the guard last saw of it.
	Check    string `json:"check"`
	Evidence string `json:"evidence,omitempty"`
	// RevertError is set when the revert itself failed: the node is still in To.
	RevertError string    `json:"revertError,omitempty"`
	At          time.Time `json:"at"`
}

// ParseFailure reads a Failure.
func ParseFailure(data []byte) (*Failure, error) {
	f := &Failure{}
	if err := json.Unmarshal(data, f); err != nil {
		return nil, fmt.Errorf("%s: %w", FailedPath, err)
	}
	if f.To == "" {
		return nil, fmt.Errorf("%s: no target config (to)", FailedPath)
	}
	return f, nil
}

// Reason is what the agent reports, starting with NodeBootFailed.
func (f *Failure) Reason() string {
	s := "NodeBootFailed: " + f.Check
	if f.Evidence != "" {
		s += " (" + f.Evidence + ")"
	}
	if f.RevertError != "" {
		return s + "; reverting to " + f.From + " failed, the node is still in " + f.To + ": " + f.RevertError
	}
	return s + "; reverted to " + f.From
}
