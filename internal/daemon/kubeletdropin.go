package daemon

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mco-dev/mco/internal/daemon/runningkubelet"
	"github.com/mco-dev/mco/internal/kubeletconfig"
)

// findKubelet is the node's running kubelet and when it started (it read its configuration
// then).
func (a *Agent) findKubelet() (runningkubelet.Kubelet, time.Time, bool, error) {
	if a.opts.Kubelet != nil {
		return a.opts.Kubelet()
	}
	k, found, err := runningkubelet.Find("/proc")
	if err != nil || !found {
		return k, time.Time{}, found, err
	}
	started, err := processStart("/proc", k.PID)
	return k, started, true, err
}

// kubeletDropInRefusal is why this node's kubelet would never read the drop-in next writes
// (nil when it would, or next writes none): refused before any drain or write, naming the
// kubelet's flag. err is a failure to find out.
func (a *Agent) kubeletDropInRefusal(next *loaded) (refusal, err error) {
	want, ok := next.set.Lookup(kubeletconfig.DropInPath)
	if !ok {
		return nil, nil
	}
	k, _, found, err := a.findKubelet()
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("no kubelet runs on this node, so whether it reads %s cannot be told yet", kubeletconfig.DropInPath)
	}
	if k.DropInDir == kubeletconfig.DropInDir {
		return nil, nil
	}
	return k.Check(kubeletconfig.DropInPath, want.Data), nil
}

// kubeletDropInInEffect verifies that the running kubelet has every setting of the config's
// drop-in: it reads the drop-in directory, the file is the config's, nothing after it or on the
// command line overrides it, and it started after the file was last written. nil when the
// config writes no drop-in.
func (a *Agent) kubeletDropInInEffect(l *loaded) error {
	want, ok := l.set.Lookup(kubeletconfig.DropInPath)
	if !ok {
		return nil
	}
	k, started, found, err := a.findKubelet()
	if err != nil {
		return err
	}
	if !found {
		// Between a restart's stop and start, or a kubelet that crashed: tried again.
		return fmt.Errorf("no kubelet runs on this node yet to check %s against", kubeletconfig.DropInPath)
	}
	if err := k.Check(kubeletconfig.DropInPath, want.Data); err != nil {
		return err
	}
	info, err := a.root.Lstat(kubeletconfig.DropInPath)
	if err != nil {
		return err
	}
	// The start time is known to the second only (the boot time it counts from, btime, is in
	// whole seconds and moves with clock adjustments): a kubelet counts as started before the
	// file only when it clearly was. The agent's own writes are followed by the plan's restart
	// anyway; this catches a kubelet nobody restarted (a host adopted as it is).
	written := time.Unix(info.ModTime.Unix())
	if started.Before(written.Add(-startTimeSlack)) {
		return &runningkubelet.NotInEffectError{Path: kubeletconfig.DropInPath, Reason: fmt.Sprintf(
			"the kubelet started at %s, before the file was written at %s: restart it (systemctl restart kubelet)",
			started.UTC().Format(time.RFC3339), written.UTC().Format(time.RFC3339))}
	}
	return nil
}

// startTimeSlack is how far processStart may be off.
const startTimeSlack = 2 * time.Second

// processStart is when process pid started: its start time in clock ticks after boot
// (/proc/PID/stat field 22) from the boot time (/proc/stat btime). USER_HZ is 100 on every
// Linux ABI Go supports.
func processStart(procDir string, pid int) (time.Time, error) {
	stat, err := os.ReadFile(filepath.Join(procDir, strconv.Itoa(pid), "stat"))
	if err != nil {
		return time.Time{}, err
	}
	// The command name (field 2) is parenthesized and may hold spaces: count after its end.
	end := bytes.LastIndexByte(stat, ')')
	fields := strings.Fields(string(stat[end+1:]))
	if end < 0 || len(fields) < 20 {
		return time.Time{}, fmt.Errorf("%s/%d/stat: unexpected format", procDir, pid)
	}
	ticks, err := strconv.ParseInt(fields[19], 10, 64) // field 22 overall
	if err != nil {
		return time.Time{}, fmt.Errorf("%s/%d/stat: start time: %w", procDir, pid, err)
	}
	sys, err := os.ReadFile(filepath.Join(procDir, "stat"))
	if err != nil {
		return time.Time{}, err
	}
	for _, line := range strings.Split(string(sys), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			boot, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, err
			}
			const userHZ = 100
			return time.Unix(boot, 0).Add(time.Duration(ticks) * time.Second / userHZ), nil
		}
	}
	return time.Time{}, fmt.Errorf("%s/stat has no btime", procDir)
}
