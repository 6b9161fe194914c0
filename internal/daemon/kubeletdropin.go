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
	"github.com/mco-dev/mco/internal/kubeletfiles"
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
	want, ok := next.set.Lookup(kubeletfiles.DropInPath)
	if !ok {
		return nil, nil
	}
	k, _, found, err := a.findKubelet()
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("no kubelet runs on this node, so whether it reads %s cannot be told yet", kubeletfiles.DropInPath)
	}
	if k.DropInDir == kubeletfiles.DropInDir {
		return nil, nil
	}
	return k.Check(kubeletfiles.DropInPath, want.Data), nil
}

// kubeletDropInInEffect verifies that the running kubelet has every setting of the config's
// drop-in: it reads the drop-in directory, the file is the config's, nothing after it or on the
// command line overrides it, and it started after the file was last written. nil when the
// config writes no drop-in.
func (a *Agent) kubeletDropInInEffect(l *loaded) error {
	want, ok := l.set.Lookup(kubeletfiles.DropInPath)
	if !ok {
		return nil
	}
	k, started, found, err := a.findKubelet()
	if err != nil {
		return err
	}
	if !found {
		// Between a restart's stop and start, or a kubelet that crashed: tried again.
		return fmt.Errorf("no kubelet runs on this node yet to check %s against", kubeletfiles.DropInPath)
	}
	if err := k.Check(kubeletfiles.DropInPath, want.Data); err != nil {
		return err
	}
	info, err := a.root.Lstat(kubeletfiles.DropInPath)
	if err != nil {
		return err
	}
	// A kubelet nobody restarted after the file was written (a host adopted as it is, a
	// restart that failed) never read it.
	written := time.Unix(info.ModTime.Unix())
	if started.Before(written.Add(-startTimeSlack)) {
		return &runningkubelet.NotInEffectError{Path: kubeletfiles.DropInPath, Reason: fmt.Sprintf(
			"the kubelet started at %s, before the file was written at %s: restart it (systemctl restart kubelet)",
			started.UTC().Format(time.RFC3339), written.UTC().Format(time.RFC3339))}
	}
	return nil
}

// startTimeSlack is how far processStart may be off: a clock tick, and the reads between.
const startTimeSlack = 50 * time.Millisecond

// processStart is when process pid started, on the wall clock: now less the time since it
// started, which is the system's uptime (/proc/uptime, in hundredths) less its start time in
// clock ticks after boot (/proc/PID/stat field 22; USER_HZ is 100 on every Linux ABI Go
// supports). /proc/stat's btime would do too, but it is rounded to the second.
func processStart(procDir string, pid int) (time.Time, error) {
	now := time.Now()
	stat, err := os.ReadFile(filepath.Join(procDir, strconv.Itoa(pid), "stat"))
	if err != nil {
		return time.Time{}, err
	}
	// The command name (field 2) is parenthesized and may hold spaces: count after its end.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return time.Time{}, fmt.Errorf("%s/%d/stat: unexpected format", procDir, pid)
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 20 {
		return time.Time{}, fmt.Errorf("%s/%d/stat: unexpected format", procDir, pid)
	}
	ticks, err := strconv.ParseInt(fields[19], 10, 64) // field 22 overall
	if err != nil {
		return time.Time{}, fmt.Errorf("%s/%d/stat: start time: %w", procDir, pid, err)
	}
	up, err := os.ReadFile(filepath.Join(procDir, "uptime"))
	if err != nil {
		return time.Time{}, err
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(up)), " ")
	secs, err := strconv.ParseFloat(first, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s/uptime: %w", procDir, err)
	}
	const userHZ = 100
	since := time.Duration(secs*float64(time.Second)) - time.Duration(ticks)*time.Second/userHZ
	return now.Add(-since), nil
}
