package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/drift"
	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/etcdindex"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
)

// session is what the agent learned since it started.
type session struct {
	// stuck is a journal whose rollback failed, retried until recovered or abandoned.
	stuck *stuckJournal
	// checker verifies the disk against checkedConfig; monitor runs it in the background.
	checker       *drift.Checker
	checkedConfig string
	stopMonitor   context.CancelFunc
	// drift is the monitor's latest finding, handed to the loop.
	drift chan error
	// lastDrift is the drift the loop acted on.
	lastDrift error
	// drainRequested is when the agent asked for the current drain.
	drainRequested time.Time
	drainTimer     *time.Timer
	// rebootQueuedAt (zero when none is queued): nothing more to do until the node restarts,
	// unless the reboot does not come within RebootTimeout (rebootTimer pokes the loop then);
	// rebootRequests counts the reboots asked for in this process.
	rebootQueuedAt time.Time
	rebootTimer    *time.Timer
	rebootRequests int
	// rebootPending is the config the reboot-pending record names ("" none), nil until read.
	rebootPending *string
	// booted is what the OS backend reported booted, asked once per agent process: settle
	// verifies it on every pass (drift ticks included) and rpm-ostree status takes seconds.
	// What booted changes only with a reboot, and no agent process outlives a boot (a reboot
	// ends it on a real node; a dev machine's agent is a unit inside the machine). The boot id
	// would be the natural key otherwise, but /proc is the agent's, not the root's, and dev
	// machines share the host's kernel, so their reboots keep it.
	booted *osimage.Booted
	// firstBoot is the first-boot failure record ("" when none), read once per process too.
	firstBoot *string
	// configs holds loaded configs by rendered name. Rendered names are content-addressed, so a
	// name always loads the same config; without this every wake-up would fetch and parse it
	// again. sync keeps only the current and desired ones.
	configs map[string]*loaded
	// committed is the name in currentconfig when committedKnown. The agent is the file's only
	// writer, so it is read once and again only after the agent wrote or recovered it.
	committed      string
	committedKnown bool
	// status is the MachineConfigNode report (nodestatus.go).
	status statusReport
	// plannedUpdate is the "current→desired" update last logged as planned: an update waiting
	// for its drain is planned again on every wake, and one log line per update is enough.
	plannedUpdate string
	// etcdIndex is the machine's etcd member index (nil: none), once etcdIndexRead.
	etcdIndex     *int
	etcdIndexRead bool
	// adoptionRecheckAt is when the next comparison of a host waiting for adoption is due.
	adoptionRecheckAt time.Time
	// containerdConfig is containerd's config.toml, read again only when it changed.
	containerdConfig cachedFile
}

// bootedSystem is what the OS backend says booted (cached for the process, see session).
func (a *Agent) bootedSystem(ctx context.Context) (osimage.Booted, error) {
	if a.s.booted == nil {
		b, err := a.opts.OS.Booted(ctx)
		if err != nil {
			return osimage.Booted{}, fmt.Errorf("asking OS backend %q what booted: %w", a.opts.OS.Name(), err)
		}
		a.s.booted = &b
	}
	return *a.s.booted, nil
}

// loaded is a rendered config with its parsed forms.
type loaded struct {
	mc  *mcfgv1.MachineConfig
	ign ignition.Config
	// set is what the config puts on this host: its own files and units, and what this host's
	// runtime needs besides (hostlayout.Derive).
	set nodefiles.Set
	// hostErr is why this host cannot be given the config (a *hostlayout.DerivedError); an
	// update to it is refused before any drain or write.
	hostErr error
}

// load fetches a rendered config; the on-disk record stands in when the API no longer has it
// (it may have been garbage collected while the node was down). "" is the empty config.
func (a *Agent) load(ctx context.Context, name string) (*loaded, error) {
	if name == "" {
		return &loaded{ign: ignition.Empty()}, nil
	}
	if l, ok := a.s.configs[name]; ok {
		return l, nil
	}
	mc, err := a.kube.machineConfig(ctx, name)
	if err != nil {
		if committed, cerr := a.committedConfig(); cerr == nil && committed != nil && committed.Name == name {
			mc = committed
		} else {
			return nil, err
		}
	}
	index, err := a.etcdIndex()
	if err != nil {
		return nil, err
	}
	l, err := parseConfig(mc, index)
	if err != nil {
		return nil, err
	}
	if err := a.deriveForHost(l); err != nil {
		return nil, err
	}
	if a.s.configs == nil {
		a.s.configs = map[string]*loaded{}
	}
	a.s.configs[name] = l
	return l, nil
}

// keepConfigs drops the loaded configs not named, so the cache holds no more than the configs
// the node moves between.
func (a *Agent) keepConfigs(names ...string) {
	for name := range a.s.configs {
		if !slices.Contains(names, name) {
			delete(a.s.configs, name)
		}
	}
}

// parseConfig parses mc, templated with etcdIndex when the machine has one (see readEtcdIndex).
func parseConfig(mc *mcfgv1.MachineConfig, etcdIndex *int) (*loaded, error) {
	ign, err := ignition.Parse(mc.Spec.Config.Raw)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", mc.Name, err)
	}
	if etcdIndex != nil {
		if ign, err = etcdindex.Apply(ign, *etcdIndex); err != nil {
			return nil, fmt.Errorf("%s with %s %d (this machine's, from %s):\n%w", mc.Name, etcdindex.Variable, *etcdIndex, etcdindex.IndexPath, err)
		}
	}
	set, err := nodefiles.FromConfig(ign)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mc.Name, err)
	}
	return &loaded{mc: mc, ign: ign, set: set}, nil
}

// committedName is the name currentconfig records, "" when there is none.
func (a *Agent) committedName() (string, error) {
	if !a.s.committedKnown {
		name, err := apply.CommittedName(a.root)
		if err != nil {
			return "", err
		}
		a.s.committed, a.s.committedKnown = name, true
	}
	return a.s.committed, nil
}

// forgetCommitted makes the next committedName read currentconfig again; call it whenever the
// agent writes the file or lets Recover settle it.
func (a *Agent) forgetCommitted() { a.s.committed, a.s.committedKnown = "", false }

func (a *Agent) committedConfig() (*mcfgv1.MachineConfig, error) {
	data, err := apply.ReadCommitted(a.root)
	if err != nil || data == nil {
		return nil, err
	}
	return decodeMachineConfig(data)
}

func decodeMachineConfig(data []byte) (*mcfgv1.MachineConfig, error) {
	mc := &mcfgv1.MachineConfig{}
	if err := json.Unmarshal(data, mc); err != nil {
		return nil, fmt.Errorf("%s: %w", apply.CurrentConfigPath, err)
	}
	return mc, nil
}

// report writes state, reason and optionally more annotations when they differ from the Node.
func (a *Agent) report(ctx context.Context, state protocol.NodeState, reason string, extra map[string]*string) error {
	node := a.kube.node()
	reason = truncate(reason)
	set := map[string]*string{}
	want := map[string]*string{protocol.StateAnnotation: ptrTo(string(state)), protocol.ReasonAnnotation: ptrTo(reason)}
	if reason == "" {
		want[protocol.ReasonAnnotation] = nil
	}
	for k, v := range extra {
		want[k] = v
	}
	for k, v := range want {
		have, ok := node.Annotations[k]
		if (v == nil && ok) || (v != nil && (!ok || have != *v)) {
			set[k] = v
		}
	}
	a.metrics.setState(state, reason)
	if len(set) > 0 {
		if err := a.kube.patchAnnotations(ctx, set); err != nil {
			return err
		}
	}
	a.publishState(ctx, state, reason, extra)
	return nil
}

func truncate(s string) string {
	if len(s) > protocol.MaxReasonLength {
		return s[:protocol.MaxReasonLength]
	}
	return s
}

func ptrTo(s string) *string { return &s }

func annotation(node *corev1.Node, key string) string { return node.Annotations[key] }
