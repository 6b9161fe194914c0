package daemon_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// stopDuringReload stops its agent (as SIGTERM does when the agent's pod is replaced) at the
// transaction's service reload, then reloads with the context it was given, which, as
// exec.CommandContext's systemctl would, fails once that context is canceled.
type stopDuringReload struct {
	*liveSystemd
	mu       sync.Mutex
	stop     func()
	canceled bool
}

func (s *stopDuringReload) Reload(ctx context.Context, u string) error {
	s.mu.Lock()
	stop := s.stop
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	if err := ctx.Err(); err != nil {
		s.mu.Lock()
		s.canceled = true
		s.mu.Unlock()
		return err
	}
	return s.liveSystemd.Reload(ctx, u)
}

// TestStopMidTransactionFinishesIt: an agent stopped in the middle of its transaction (its pod
// replaced by an upgrade) finishes the transaction, service reload included, and commits it,
// instead of failing the reload on its canceled context and rolling the node back.
func TestStopMidTransactionFinishesIt(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const name = "stopped-mid-txn"
	const policy = "/etc/containers/policy.json" // its change reloads crio: no drain, no reboot
	r0 := machineConfig("rendered-stop-0", map[string]string{policy: `{"default":[]}`})
	r1 := machineConfig("rendered-stop-1", map[string]string{policy: "{}"})
	createConfigs(t, ctx, r0, r1)
	root := newRoot(t)
	provision(t, root, r0)
	createBareNode(t, ctx, name)
	sd := &stopDuringReload{}
	ag := startAgentWith(t, name, root, func(o *daemon.Options) {
		sd.liveSystemd = o.Systemd.(*liveSystemd)
		o.Systemd = sd
	}, nil)
	awaitNode(t, ctx, name, "Done in "+r0.Name, doneIn(r0.Name))
	sd.mu.Lock()
	sd.stop = ag.stop
	sd.mu.Unlock()

	annotate(t, ctx, name, map[string]string{protocol.DesiredConfigAnnotation: r1.Name})
	select {
	case <-ag.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not stop")
	}
	if sd.canceled {
		t.Error("the transaction's reload got the stop's canceled context: a stop mid-transaction fails and rolls back the update")
	}
	mustContain(t, root, policy, "{}")
	mustBeAbsent(t, root, apply.JournalPath)
	var committed mcfgv1.MachineConfig
	data, err := os.ReadFile(filepath.Join(root, apply.CurrentConfigPath))
	if err != nil || json.Unmarshal(data, &committed) != nil || committed.Name != r1.Name {
		t.Errorf("committed config %q (%v), want %s", committed.Name, err, r1.Name)
	}
}
