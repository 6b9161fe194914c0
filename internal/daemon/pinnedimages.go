package daemon

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/daemon/hostlayout"
	"github.com/mco-dev/mco/internal/daemon/imagepin"
	"github.com/mco-dev/mco/internal/pinnedimages"
)

// Where the kubelet's runtimes listen, on the node.
const (
	containerdSocket = "/run/containerd/containerd.sock"
	crioSocket       = "/var/run/crio/crio.sock"
)

// pinnedImagesResync re-checks the pinned images this often without any change: an image
// removed by hand, a runtime restarted with its labels lost, are pinned again.
const pinnedImagesResync = 10 * time.Minute

// pinnedConditions are the two PinnedImageSets conditions the image pinning writes, kept for the
// agent's own status writes: the MachineConfigNode's conditions are one list, written whole by a
// merge patch, and the update's writes must carry these as they are, not as last read.
type pinnedConditions struct {
	mu    sync.Mutex
	conds []metav1.Condition
}

func (p *pinnedConditions) set(all []metav1.Condition) {
	mine := pinnedimages.OwnConditions(all)
	p.mu.Lock()
	p.conds = mine
	p.mu.Unlock()
}

// overlay puts the pinning's conditions into conds.
func (p *pinnedConditions) overlay(conds []metav1.Condition) []metav1.Condition {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.conds) == 0 {
		return conds
	}
	out := slices.Clone(conds)
	for _, c := range p.conds {
		if i := slices.IndexFunc(out, func(o metav1.Condition) bool { return o.Type == c.Type }); i >= 0 {
			out[i] = c
		} else {
			out = append(out, c)
		}
	}
	return out
}

// pinImages runs the node's PinnedImageSets until ctx ends: a pass whenever a pool or set
// changes, the node's labels change, or pinnedImagesResync passes. A cluster without the
// PinnedImageSet kind has nothing to pin.
func (a *Agent) pinImages(ctx context.Context, cfg *rest.Config) {
	log := a.opts.Log.With("node", a.opts.NodeName)
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: agentScheme})
	if err != nil {
		log.Error("pinned images: no client", "err", err)
		return
	}
	if err := c.List(ctx, &mcfgv1.PinnedImageSetList{}, client.Limit(1)); meta.IsNoMatchError(err) {
		log.Info("the cluster has no PinnedImageSet kind; not pinning images")
		return
	}
	wake := make(chan struct{}, 1)
	poke := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	informer := func(list client.ObjectList, obj client.Object) cache.SharedIndexInformer {
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				l := list.DeepCopyObject().(client.ObjectList)
				return l, c.List(ctx, l, &client.ListOptions{Raw: &o})
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return c.Watch(ctx, list.DeepCopyObject().(client.ObjectList), &client.ListOptions{Raw: &o})
			},
		}
		inf := cache.NewSharedIndexInformer(lw, obj, 0, cache.Indexers{})
		// A spec's change only: the controller writes the pools' status as the agents report,
		// and waking on that would make a pass of every report.
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { poke() }, DeleteFunc: func(any) { poke() },
			UpdateFunc: func(o, n any) {
				if o.(client.Object).GetGeneration() != n.(client.Object).GetGeneration() {
					poke()
				}
			},
		})
		go inf.RunWithContext(ctx)
		return inf
	}
	pools := informer(&mcfgv1.MachineConfigPoolList{}, &mcfgv1.MachineConfigPool{})
	sets := informer(&mcfgv1.PinnedImageSetList{}, &mcfgv1.PinnedImageSet{})
	labels := map[string]string{}
	_, _ = a.kube.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { poke() },
		UpdateFunc: func(_, obj any) {
			if n, ok := obj.(*corev1.Node); ok && !equality.Semantic.DeepEqual(n.Labels, labels) {
				labels = n.Labels
				poke()
			}
		},
	})
	if !cache.WaitForCacheSync(ctx.Done(), pools.HasSynced, sets.HasSynced) {
		return
	}
	poke()
	resync := time.NewTicker(pinnedImagesResync)
	defer resync.Stop()
	var rt *imagepin.CRI
	var pinner *imagepin.Manager
	defer func() {
		if rt != nil {
			rt.Close()
		}
	}()
	// quiet: the last pass had no set, and its report is written (or was never needed); more
	// such passes (every render wakes each agent) need not read the MachineConfigNode again.
	quiet := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-resync.C:
		}
		if rt == nil {
			m, cri, err := a.pinManager()
			if err != nil {
				log.Warn("pinned images: cannot reach the container runtime; trying again at the next change", "err", err)
				continue
			}
			rt, pinner = cri, m
		}
		var allPools []*mcfgv1.MachineConfigPool
		for _, o := range pools.GetStore().List() {
			allPools = append(allPools, o.(*mcfgv1.MachineConfigPool))
		}
		var allSets []mcfgv1.PinnedImageSet
		for _, o := range sets.GetStore().List() {
			allSets = append(allSets, *o.(*mcfgv1.PinnedImageSet))
		}
		p, err := pinner.Run(ctx, allPools, allSets)
		if err != nil {
			log.Warn("pinned images: the pass did not finish; trying again at the next change", "err", err)
			continue
		}
		if len(p.Sets) == 0 && quiet {
			continue
		}
		if err := a.writePinnedStatus(ctx, p, true); err != nil {
			log.Warn("pinned images: could not write the MachineConfigNode's status", "err", err)
			quiet = false
		} else {
			quiet = len(p.Sets) == 0
		}
	}
}

// unpinIfPinned unpins every image the node's record says mco pinned (mco is being removed).
func (a *Agent) unpinIfPinned(ctx context.Context, why string) {
	if ok, err := a.root.Exists(imagepin.RecordPath); err == nil && !ok {
		return // nothing was pinned here
	}
	m, cri, err := a.pinManager()
	if err != nil {
		a.opts.Log.Error("mco is being removed, but the images it pinned stay pinned", "node", a.opts.NodeName, "why", why, "err", err)
		return
	}
	defer cri.Close()
	n, err := m.Release(ctx)
	switch {
	case err != nil:
		a.opts.Log.Error("mco is being removed, but the images it pinned stay pinned", "node", a.opts.NodeName, "why", why, "err", err)
	case n > 0:
		a.opts.Log.Info("mco is being removed: the images it pinned are unpinned", "node", a.opts.NodeName, "why", why, "images", n)
	}
}

// pinManager builds the manager for the runtime the kubelet reports on the Node.
func (a *Agent) pinManager() (*imagepin.Manager, *imagepin.CRI, error) {
	node := a.kube.node()
	if node == nil {
		return nil, nil, errors.New("the node is not known yet")
	}
	rt := hostlayout.RuntimeOf(node.Status.NodeInfo.ContainerRuntimeVersion)
	if a.opts.Runtime != nil {
		rt = *a.opts.Runtime
	}
	socket := containerdSocket
	if rt.Name == hostlayout.RuntimeCRIO {
		socket = crioSocket
	}
	cri, err := imagepin.DialCRI(filepath.Join(a.opts.Root, socket))
	if err != nil {
		return nil, nil, err
	}
	m := &imagepin.Manager{
		Node: a.kube.node, Runtime: cri, Root: a.root, MinFree: a.opts.PinnedImagesMinFree, Log: a.opts.Log,
		Progress: func(p imagepin.Pass) {
			if err := a.writePinnedStatus(context.Background(), p, false); err != nil {
				a.opts.Log.Warn("pinned images: could not write the MachineConfigNode's status", "node", a.opts.NodeName, "err", err)
			}
		},
	}
	creds := func() (*imagepin.Credentials, error) {
		data, err := a.root.ReadFile(imagepin.PullSecretPath)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return imagepin.ParseCredentials(data)
	}
	m.Creds = creds
	if rt.Name == hostlayout.RuntimeCRIO {
		m.Sizer = imagepin.PodmanSizer{Root: a.opts.Root, AuthFile: imagepin.PullSecretPath}
		m.Pinner = imagepin.CRIO{Root: a.root, Systemd: a.opts.Systemd}
	} else {
		m.Sizer = imagepin.ContainerdSizer{Root: a.root}
		m.Pinner = imagepin.Containerd{Root: a.opts.Root}
	}
	return m, cri, nil
}

// writePinnedStatus writes the pass's sets and conditions into the node's MachineConfigNode,
// from the object as stored and with its resourceVersion, so a concurrent write of the update's
// conditions is a conflict and a fresh try, never overwritten.
func (a *Agent) writePinnedStatus(ctx context.Context, p imagepin.Pass, done bool) error {
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	var err error
	for range 3 {
		m := &mcfgv1.MachineConfigNode{}
		if err = a.kube.client.Get(ctx, client.ObjectKey{Name: a.opts.NodeName}, m); err != nil {
			if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
				return nil // the controller creates it; the next pass reports
			}
			return err
		}
		want := imagepin.Status(m.Status, a.opts.NodeName, p, done, metav1.Now().Rfc3339Copy())
		a.pinnedConds.set(want.Conditions)
		if equality.Semantic.DeepEqual(want, m.Status) {
			return nil
		}
		before := m.DeepCopy()
		m.Status = want
		err = a.kube.client.Status().Patch(ctx, m, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
		if !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}
