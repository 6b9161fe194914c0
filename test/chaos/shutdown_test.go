package chaos

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/dev/machine"
	"github.com/mco-dev/mco/test/clustertest"
)

// slowShutdownAfter: a dev machine's shutdown normally stops every unit within 3 s (10 s when a
// container scope's emptying was missed: internal/dev/machine's shutdownBoundDropIns); one still
// stopping after this long is held by something worth a record.
const slowShutdownAfter = 20 * time.Second

// stoppingUnitsScript prints systemd's jobs and, for each unit it is still stopping, its cgroup's
// events and every task left in it (state, signals pending, blocked and caught, kernel wait,
// command line), then every process of the machine. A task whose command line is empty has begun exiting (its
// memory is gone); one in state D waits in the kernel, where no signal reaches it; a Z has
// exited and waits for its parent.
const stoppingUnitsScript = `systemctl list-jobs --no-pager | head -20
echo "--- what each stopping unit still holds: its cgroup's events and tasks (cgroup v2, or v1's name=systemd), each task's state, signals, kernel wait and command line"
for u in $(systemctl list-units --state=deactivating --no-pager --plain --no-legend 2>/dev/null | awk '{print $1}' | head -5); do
  rel=$(systemctl show -p ControlGroup --value "$u" 2>/dev/null)
  echo "$u: $(systemctl show -p SubState -p MainPID -p ControlGroup "$u" 2>/dev/null | paste -sd' ')"
  for base in /sys/fs/cgroup/unified /sys/fs/cgroup/systemd /sys/fs/cgroup; do
    d=$base$rel
    [ -n "$rel" ] && [ -d "$d" ] || continue
    f=$d/cgroup.threads
    [ -e "$f" ] || f=$d/tasks
    echo "  $d: $(paste -sd' ' "$d/cgroup.events" 2>/dev/null) tasks: $(head -20 "$f" | paste -sd' ')"
    for p in $(head -20 "$f"); do
      echo "    task $p: $(sed -n 's/^\(Name\|State\|Tgid\|PPid\|SigPnd\|ShdPnd\|SigBlk\|SigIgn\|SigCgt\):\s*/\1=/p' /proc/$p/status 2>/dev/null | paste -sd' ') wchan=$(cat /proc/$p/wchan 2>/dev/null) cmdline=$(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null)"
    done
  done
done
echo "--- every process of the machine (a Z has exited and waits for its parent)"
ps -eo pid,ppid,stat,wchan:22,lstart,args --no-headers 2>/dev/null | cut -c1-200 | head -40`

// shutdownWatch records, while a round settles, every machine shutdown still stopping units
// after slowShutdownAfter, with what held it. A dev machine forces its reboot once the reboot
// job has waited 2 min (its reboot.target's JobTimeoutSec), so such a shutdown slows the round
// without failing it; the record says where the time went, in a passing round as in a failing
// one.
type shutdownWatch struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	records []string
}

// watchShutdowns polls each of the suite's machines every 5 s until stop.
func (s *suite) watchShutdowns(ctx context.Context) *shutdownWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &shutdownWatch{cancel: cancel, done: make(chan struct{})}
	nodes := append([]string(nil), s.nodes...)
	go func() {
		defer close(w.done)
		// seen: each machine's current shutdown, from when it was first seen; one record each.
		type shutdown struct {
			since    time.Time
			recorded bool
		}
		seen := map[string]*shutdown{}
		for clustertest.Sleep(ctx, 5*time.Second) {
			for _, name := range nodes {
				if !s.stopping(ctx, name) {
					delete(seen, name)
					continue
				}
				sd := seen[name]
				if sd == nil {
					seen[name] = &shutdown{since: time.Now()}
					continue
				}
				if sd.recorded || time.Since(sd.since) < slowShutdownAfter {
					continue
				}
				sd.recorded = true
				octx, cancel := context.WithTimeout(ctx, 15*time.Second)
				out, err := s.cl.Output(octx, name, "sh", "-c", stoppingUnitsScript)
				cancel()
				w.add(fmt.Sprintf("%s: its shutdown has been stopping units for over %s (since %s; %v)\n%s",
					name, time.Since(sd.since).Round(time.Second), sd.since.Format("15:04:05"), err, out))
			}
		}
	}()
	return w
}

// stopping: the machine's systemd is shutting down.
func (s *suite) stopping(ctx context.Context, name string) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// is-system-running exits non-zero for every state but running; its output is the state.
	out, _ := s.cl.Output(ctx, name, "systemctl", "is-system-running")
	return strings.TrimSpace(out) == "stopping"
}

func (w *shutdownWatch) add(record string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.records = append(w.records, record)
}

// stop ends the watch and returns its records.
func (w *shutdownWatch) stop() []string {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.records
}

// systemdLogged counts the lines systemd (PID 1) wrote to a machine's journal that match
// pattern (grep's basic regular expression), over all its boots: the machines keep their
// journal.
func (s *suite) systemdLogged(ctx context.Context, name, pattern string) (int, error) {
	out, err := s.cl.Output(ctx, name, "sh", "-c", `journalctl --no-pager -o cat _PID=1 | grep -c "$1"; true`, "sh", pattern)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return 0, fmt.Errorf("counting %q in %s's journal: %q: %v", pattern, name, out, err)
	}
	return n, nil
}

// agentSIGKILLed is systemd's line for an agent still running 10 s after its scope's SIGTERM at
// a shutdown. Its pod's grace period does not apply there (a worker's kubelet has no graceful
// node shutdown), so a stop the agent does not finish at once is cut short.
const agentSIGKILLed = `Killing process [0-9]* (mco-node) with signal SIGKILL`

// scopeStopTimedOut is systemd's line for a container scope whose stop ran into
// internal/dev/machine's 10 s bound.
const scopeStopTimedOut = `^cri-containerd-[0-9a-f]*[.]scope: Stopping timed out`

// checkAgentsStopped fails the test for every agent systemd had to SIGKILL at a shutdown since
// the last check.
func (s *suite) checkAgentsStopped(t *testing.T, ctx context.Context) {
	t.Helper()
	if s.agentKills == nil {
		s.agentKills = map[string]int{}
	}
	for _, name := range s.nodes {
		n, err := s.systemdLogged(ctx, name, agentSIGKILLed)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if n > s.agentKills[name] {
			t.Errorf("%s: systemd had to SIGKILL the agent at %d more shutdown(s): it did not exit within 10 s of its SIGTERM", name, n-s.agentKills[name])
		}
		s.agentKills[name] = n
	}
}

// scopeStopTimeouts counts, over the suite's machines, the container scopes whose stop timed
// out (internal/dev/machine's 10 s bound; systemd names each in its journal), and the boots: how
// often systemd missed a scope's emptying, against how many reboots it could have.
func (s *suite) scopeStopTimeouts(ctx context.Context) string {
	timeouts, boots := 0, 0
	for _, name := range s.nodes {
		if n, err := s.systemdLogged(ctx, name, scopeStopTimedOut); err == nil {
			timeouts += n
		}
		if st, err := machine.ReadStatus(s.cl.MachineDir(name)); err == nil {
			boots += st.Boots
		}
	}
	return fmt.Sprintf("container scopes whose stop timed out at a shutdown: %d, over %d boots of %d machines", timeouts, boots, len(s.nodes))
}
