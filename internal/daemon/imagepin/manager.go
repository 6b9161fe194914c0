// Package imagepin is the node agent's part of PinnedImageSets: it pulls the images of the sets
// its pool has through the node's container runtime, pins them so the kubelet's image garbage
// collection keeps them, verifies that the runtime reports them pinned, and reports each set on
// the node's MachineConfigNode. The decisions are internal/pinnedimages'.
package imagepin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/pinnedimages"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// Runtime is the container runtime as the manager uses it (CRI in production).
type Runtime interface {
	Version(ctx context.Context) (name, version string, err error)
	Status(ctx context.Context, ref string) (present, pinned bool, err error)
	Pull(ctx context.Context, ref string, auth *runtimeapi.AuthConfig) error
}

// RecordPath keeps the images mco pinned on a containerd node (their labels are the runtime's
// record; this one says which of them are mco's to unpin).
const RecordPath = "/etc/machine-config-daemon/pinned-images.json"

// Workers and pacing of pulls, as OpenShift's agent: five at a time, one on control-plane nodes
// (their disks serve etcd), and a second's pause after each pull.
const (
	Workers             = 5
	ControlPlaneWorkers = 1
	PullPause           = time.Second
	pullTries           = 3
)

// Pass is what one pass over a node found: the sets its pool has, and each set's result.
type Pass struct {
	Sets    []pinnedimages.Set
	Results map[string]pinnedimages.Result
}

// Manager runs the passes of one node.
type Manager struct {
	Node    func() *corev1.Node
	Runtime Runtime
	Root    *noderoot.Root
	Sizer   Sizer
	Creds   func() (*Credentials, error)
	Pinner  Pinner
	MinFree resource.Quantity
	Log     *slog.Logger
	Pause   time.Duration // between pulls of one worker; PullPause when zero
	// VerifyTimeout bounds the wait for the runtime to report pinned images pinned (containerd's
	// CRI learns of a label from an event); 15 s when zero.
	VerifyTimeout time.Duration
	Progress      func(p Pass) // called before the pulls, to report the sets as progressing
}

// Run makes one pass: pools and sets are the cluster's (all of them).
func (m *Manager) Run(ctx context.Context, pools []*mcfgv1.MachineConfigPool, all []mcfgv1.PinnedImageSet) (Pass, error) {
	node := m.Node()
	if node == nil {
		return Pass{}, errors.New("the node is not known yet")
	}
	var mine []*mcfgv1.MachineConfigPool
	if name, err := rollout.PrimaryPool(node, pools); err == nil && name != "" {
		for _, p := range pools {
			if p.Name == name {
				mine = append(mine, p)
			}
		}
	}
	p := Pass{Sets: pinnedimages.Wanted(mine, all), Results: map[string]pinnedimages.Result{}}
	had, err := m.readRecord()
	if err != nil {
		return p, err
	}
	if len(p.Sets) == 0 && len(had) == 0 {
		return p, nil
	}
	if len(p.Sets) > 0 {
		name, version, err := m.Runtime.Version(ctx)
		if err == nil {
			err = pinnedimages.CanPin(name, version)
		}
		if err != nil {
			for _, s := range p.Sets {
				p.Results[s.Name] = pinnedimages.Result{SetError: err.Error()}
			}
			return p, nil
		}
	}
	creds, err := m.Creds()
	if err != nil {
		return p, err
	}
	f := &fetch{present: map[string]bool{}, pinned: map[string]bool{}, counted: map[string]bool{}}
	f.progress = func() {
		// Reported once a pass, and only when it pulls: a pass that finds everything in place
		// (the periodic one) writes nothing.
		if m.Progress != nil && !f.reported {
			f.reported = true
			m.Progress(p)
		}
	}
	for _, s := range p.Sets {
		if ctx.Err() != nil {
			return p, ctx.Err()
		}
		p.Results[s.Name] = m.fetchSet(ctx, node, s, creds, f)
	}
	present := f.present
	// Pin last, as OpenShift's agent does: until then the kubelet may still collect what a
	// failed pull left behind.
	var pin []string
	for _, img := range pinnedimages.Images(p.Sets) {
		if present[img] {
			pin = append(pin, img)
		}
	}
	pinErr := m.Pinner.Pin(ctx, PinChange{Want: pin, Had: had, Pinned: f.pinned})
	if err := m.writeRecord(pin); err != nil {
		pinErr = errors.Join(pinErr, err)
	}
	unpinned := m.verify(ctx, pin)
	for _, s := range p.Sets {
		r := p.Results[s.Name]
		if r.SetError != "" {
			continue
		}
		for _, img := range s.Images {
			if present[img] && unpinned[img] != "" {
				r.Failed = append(r.Failed, pinnedimages.ImageError{Image: img, Reason: unpinned[img]})
			}
		}
		r.Pinned = len(r.Failed) == 0
		p.Results[s.Name] = r
	}
	if pinErr != nil {
		m.Log.Warn("pinning images", "err", pinErr)
	}
	return p, nil
}

// fetch is what one pass learns across its sets.
type fetch struct {
	// present and pinned: the images the node has, and those the runtime reports pinned.
	present, pinned map[string]bool
	// counted are the layers the disk guard has counted already.
	counted  map[string]bool
	progress func()
	reported bool
}

// fetchSet pulls what s lacks, after the disk guard.
func (m *Manager) fetchSet(ctx context.Context, node *corev1.Node, s pinnedimages.Set, creds *Credentials, f *fetch) pinnedimages.Result {
	var r pinnedimages.Result
	var missing []string
	present, counted := f.present, f.counted
	for _, img := range s.Images {
		if present[img] {
			continue
		}
		have, pinned, err := m.Runtime.Status(ctx, img)
		switch {
		case err != nil:
			r.Failed = append(r.Failed, pinnedimages.ImageError{Image: img, Reason: err.Error()})
		case have:
			present[img], f.pinned[img] = true, pinned
		default:
			missing = append(missing, img)
		}
	}
	// The disk guard, before any pull: each missing layer once, also across sets.
	var size int64
	var sized []string
	for _, img := range missing {
		layers, err := m.Sizer.Layers(ctx, img, creds)
		if err != nil {
			r.Failed = append(r.Failed, pinnedimages.ImageError{Image: img, Reason: err.Error()})
			continue
		}
		for d, n := range layers {
			if !counted[d] {
				counted[d] = true
				size += n
			}
		}
		sized = append(sized, img)
	}
	alloc, known := node.Status.Allocatable[corev1.ResourceEphemeralStorage]
	if err := pinnedimages.CheckStorage(pinnedimages.Storage{Allocatable: alloc, Known: known, MinFree: m.MinFree, Missing: size}); err != nil && len(sized) > 0 {
		r.SetError = err.Error()
		return r
	}
	if len(sized) > 0 {
		f.progress()
	}
	for img, err := range m.pull(ctx, node, sized, creds) {
		if err != nil {
			r.Failed = append(r.Failed, pinnedimages.ImageError{Image: img, Reason: "pulling: " + err.Error()})
			continue
		}
		present[img] = true
	}
	slices.SortFunc(r.Failed, func(a, b pinnedimages.ImageError) int { return strings.Compare(a.Image, b.Image) })
	return r
}

// pull pulls imgs with the node's workers, each pull tried up to pullTries times; the result
// maps each image to its error (nil: pulled).
func (m *Manager) pull(ctx context.Context, node *corev1.Node, imgs []string, creds *Credentials) map[string]error {
	workers := Workers
	if _, ok := node.Labels[protocol.MasterRoleLabel]; ok {
		workers = ControlPlaneWorkers
	} else if _, ok := node.Labels[protocol.ControlPlaneRoleLabel]; ok {
		workers = ControlPlaneWorkers
	}
	pause := m.Pause
	if pause == 0 {
		pause = PullPause
	}
	out := make(map[string]error, len(imgs))
	var mu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(workers, len(imgs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for img := range work {
				var err error
				for try := range pullTries {
					if err = m.Runtime.Pull(ctx, img, creds.Auth(img)); err == nil || ctx.Err() != nil || noSpace(err) {
						break
					}
					sleep(ctx, time.Duration(1<<try)*time.Second)
				}
				mu.Lock()
				out[img] = err
				mu.Unlock()
				sleep(ctx, pause)
			}
		}()
	}
	for _, img := range imgs {
		work <- img
	}
	close(work)
	wg.Wait()
	return out
}

// noSpace: a pull that ran out of disk is not tried again.
func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "no space left on device")
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// verify asks the runtime whether each image of pin is reported pinned; containerd's CRI learns
// of a label from an event, so a few seconds are allowed. The result names the images that are
// not, with why.
func (m *Manager) verify(ctx context.Context, pin []string) map[string]string {
	out := map[string]string{}
	wait := m.VerifyTimeout
	if wait == 0 {
		wait = 15 * time.Second
	}
	deadline := time.Now().Add(wait)
	pending := slices.Clone(pin)
	for len(pending) > 0 {
		var still []string
		for _, img := range pending {
			have, pinned, err := m.Runtime.Status(ctx, img)
			switch {
			case err != nil:
				out[img] = err.Error()
			case !have:
				out[img] = "removed from the node before it was pinned"
			case !pinned:
				still = append(still, img)
				out[img] = "the container runtime does not report it pinned"
			default:
				delete(out, img)
			}
		}
		pending = still
		if len(pending) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		sleep(ctx, 500*time.Millisecond)
	}
	return out
}

// Release unpins every image the record says mco pinned and removes the record: mco is being
// removed from the node. It returns how many were pinned.
func (m *Manager) Release(ctx context.Context) (int, error) {
	had, err := m.readRecord()
	if err != nil || len(had) == 0 {
		return 0, err
	}
	if err := m.Pinner.Pin(ctx, PinChange{Had: had}); err != nil {
		return len(had), err
	}
	return len(had), m.writeRecord(nil)
}

func (m *Manager) readRecord() ([]string, error) {
	data, err := m.Root.ReadFile(RecordPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var imgs []string
	if err := json.Unmarshal(data, &imgs); err != nil {
		return nil, fmt.Errorf("%s: %w", RecordPath, err)
	}
	return imgs, nil
}

func (m *Manager) writeRecord(imgs []string) error {
	if len(imgs) == 0 {
		err := m.Root.Remove(RecordPath, false)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	data, err := json.Marshal(imgs)
	if err != nil {
		return err
	}
	return m.Root.WriteFile(RecordPath, data, noderoot.WriteOptions{Perm: 0o644})
}

// Status is the MachineConfigNode status after p, from prev (what is stored): the sets and the
// two pinned image set conditions; done is false for the report sent before the pulls.
func Status(prev mcfgv1.MachineConfigNodeStatus, node string, p Pass, done bool, now metav1.Time) mcfgv1.MachineConfigNodeStatus {
	st := *prev.DeepCopy()
	st.PinnedImageSets = pinnedimages.NodeStatus(prev.PinnedImageSets, p.Sets, p.Results)
	if len(p.Sets) == 0 && meta.FindStatusCondition(prev.Conditions, string(mcfgv1.MachineConfigNodePinnedImageSetsProgressing)) == nil {
		return st // a node that never had a set: nothing to report
	}
	st.Conditions = pinnedimages.Conditions(prev.Conditions, node, p.Sets, p.Results, done, now)
	return st
}
