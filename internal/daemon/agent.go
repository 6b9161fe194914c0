package daemon

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/failpoint"
	"github.com/mco-dev/mco/internal/daemon/hostlayout"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/daemon/osimage"
	"github.com/mco-dev/mco/internal/daemon/reboot"
	"github.com/mco-dev/mco/internal/daemon/runningkubelet"
	"github.com/mco-dev/mco/internal/daemon/systemd"
	"github.com/mco-dev/mco/internal/pinnedimages"
	"github.com/mco-dev/mco/internal/version"
)

// Options configure one agent.
type Options struct {
	NodeName string
	// Root is where the node's root file system is mounted ("/" on the host).
	Root string
	// DriftInterval is the period of the stat-based drift check between file events.
	DriftInterval time.Duration
	// DrainTimeout bounds the wait for the drain controller before reporting Degraded.
	DrainTimeout time.Duration
	// RebootTimeout is how long a queued reboot may take to end the agent before it is asked
	// for again (three times, then Degraded).
	RebootTimeout time.Duration
	// JournalRetry is the first delay of retrying a journal whose rollback failed (default
	// 5 s); it doubles up to 5 min.
	JournalRetry time.Duration
	// ForceFileInterval is how often the agent looks for the force file (default 5 s).
	ForceFileInterval time.Duration
	// Rebooter, Systemd and OS default to the real ones for Root.
	Rebooter reboot.Rebooter
	Systemd  systemd.Manager
	OS       osimage.Backend
	// Runtime, when set, is the container runtime instead of the one the kubelet reports on the
	// Node (tests).
	Runtime *hostlayout.Runtime
	// Kubelet, when set, is the running kubelet and when it started, instead of the kubelet
	// found in /proc (tests).
	Kubelet func() (k runningkubelet.Kubelet, started time.Time, found bool, err error)
	// Metrics, when set, receives the agent's Prometheus series; the kubelet's health is then
	// checked every 30 s for them, at KubeletHealthURL if set, else where the running
	// kubelet's configuration says it serves healthz.
	Metrics          prometheus.Registerer
	KubeletHealthURL string
	// GuardBinary is the file installed on the host as the boot guard's binary (default
	// /proc/self/exe, this agent's own; tests give a small one).
	GuardBinary string
	// Guard keeps the node's pods off the Machine Config Server's ports.
	Guard GuardOptions
	// PinnedImagesMinFree is the ephemeral storage that must stay free after pulling a
	// PinnedImageSet's images (default pinnedimages.DefaultMinFree, OpenShift's 16Gi).
	PinnedImagesMinFree resource.Quantity
	Log                 *slog.Logger
}

func (o *Options) defaults(root *noderoot.Root) {
	if o.DriftInterval == 0 {
		o.DriftInterval = 30 * time.Second
	}
	if o.RebootTimeout == 0 {
		o.RebootTimeout = 5 * time.Minute
	}
	if o.DrainTimeout == 0 {
		o.DrainTimeout = time.Hour
	}
	if o.JournalRetry == 0 {
		o.JournalRetry = 5 * time.Second
	}
	if o.ForceFileInterval == 0 {
		o.ForceFileInterval = 5 * time.Second
	}
	if o.Systemd == nil {
		o.Systemd = systemd.New(o.Root)
	}
	if o.Rebooter == nil {
		o.Rebooter = reboot.Systemd{Root: o.Root, Run: systemd.ExecRunner}
	}
	if o.OS == nil {
		o.OS = osimage.Detect(o.Root, func(p string) bool { ok, _ := root.Exists(p); return ok }, systemd.ExecRunner)
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.GuardBinary == "" {
		o.GuardBinary = "/proc/self/exe"
	}
	if o.PinnedImagesMinFree.IsZero() {
		o.PinnedImagesMinFree = pinnedimages.DefaultMinFree
	}
}

// Agent is one node's agent. Its fields are the collaborators; what it learns while running
// (the drift monitor, a pending drain or reboot) lives in session.
type Agent struct {
	opts       Options
	root       *noderoot.Root
	applier    *apply.Applier
	kube       *cluster
	metrics    *metrics
	driftWatch *driftWatch
	wake       chan struct{}
	s          session
	// guardDigest is the SHA-256 of GuardBinary, read once: the binary a process runs does
	// not change, and it is tens of megabytes to hash before every rebooting update.
	guardDigest []byte
	// pinnedConds are the PinnedImageSets' conditions as pinImages last wrote them.
	pinnedConds pinnedConditions
}

// Run starts the agent and blocks until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	if opts.NodeName == "" {
		return errors.New("the node name is required")
	}
	if opts.Root == "" {
		opts.Root = "/"
	}
	if err := failpoint.Load(opts.Root); err != nil {
		return err
	}
	root, err := noderoot.Open(opts.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	opts.defaults(root)
	// A test whose armed failpoint never fires finds why here: an agent built without them
	// (the release build) ignores every arming.
	opts.Log.Info("agent starting", "node", opts.NodeName, "version", version.Version, "failpoints", failpoint.Enabled)
	a := &Agent{opts: opts, root: root, wake: make(chan struct{}, 1), metrics: newMetrics(opts.Metrics),
		applier: &apply.Applier{Root: root, Systemd: opts.Systemd, OS: opts.OS}}
	a.driftWatch = &driftWatch{log: opts.Log, metrics: a.metrics, interval: opts.DriftInterval}
	// Finish or undo an interrupted transaction before anything looks at the root, even before
	// the API answers. One that cannot be undone does not stop the agent: it is reported on the
	// Node and retried (resolveJournal), where exiting would only restart into the same failure
	// without ever telling anyone.
	rec, err := a.applier.Recover(ctx)
	if err != nil {
		rec = apply.Recovery{} // nothing was rolled back or completed
		a.noteStuck(err)
	}
	if a.kube, err = newCluster(cfg, opts.NodeName, a.poke); err != nil {
		return err
	}
	defer a.kube.stop()
	// Also when stopped before the API answered: an earlier agent's rules are the node's.
	defer a.cleanUpIfUninstalled()
	go a.kube.run(ctx)
	if opts.Metrics != nil {
		if booted, err := bootTime(); err != nil {
			opts.Log.Warn("cannot tell when the node booted; mcd_boot_time_seconds stays 0", "err", err)
		} else {
			a.metrics.bootTime.Set(booted)
		}
		target := runningKubelet("/proc", opts.Log)
		if opts.KubeletHealthURL != "" {
			target = fixedKubelet(opts.KubeletHealthURL)
		}
		go watchKubelet(ctx, target, 30*time.Second, a.metrics.kubeletState, opts.Log)
	}
	if !a.kube.synced(ctx) {
		return ctx.Err()
	}
	a.reportRecovery(rec)
	go a.guardServer(ctx)
	go a.watchForceFile(ctx, opts.ForceFileInterval)
	go a.pinImages(ctx, cfg)
	return a.loop(ctx)
}

// poke wakes the loop; wakes coalesce.
func (a *Agent) poke() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// loop syncs on every wake-up, retrying failures with a growing delay (1 s to 1 min). While a
// journal is stuck it only retries that, on the journal's own backoff.
func (a *Agent) loop(ctx context.Context) error {
	defer a.stopMonitor()
	delay := retryDelays.min
	var retry <-chan time.Time
	started := false
	for {
		if !started {
			started = a.startup(ctx) == nil
		}
		retryAt, err := a.resolveJournal(ctx)
		if err == nil && retryAt.IsZero() {
			err = a.sync(ctx)
		}
		// The one place a step's failure becomes the Node's Degraded or Unreconcilable.
		err = a.reportFailure(ctx, err)
		if a.s.status.failed {
			a.publishStatus(ctx) // a status write owed since a failure, wherever this pass stopped
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case !retryAt.IsZero():
			retry = time.After(time.Until(retryAt))
		case err != nil || !started:
			a.opts.Log.Error("sync failed; retrying", "node", a.opts.NodeName, "in", delay, "err", err)
			retry = time.After(delay)
			delay = min(2*delay, retryDelays.max)
		default:
			retry, delay = nil, retryDelays.min
		}
		// The agent is idle almost always: hand the garbage of parsing configs back to the
		// node now instead of whenever the scavenger gets to it.
		debug.FreeOSMemory()
		select {
		case <-ctx.Done():
			return nil
		case <-a.wake:
		case <-retry:
		}
	}
}
