package clustertest

import (
	"context"
	"net"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/mco-dev/mco/internal/rollout"
)

// Watcher watches Nodes on its own connection, independent of every controller, and records
// the most nodes that were ever unavailable (not Ready or not Done, rollout.Unavailable) or
// cordoned at the same moment.
//
// It survives an API server restart: a broken watch is resumed from the last resource version
// seen, and when that is no longer available (410 Gone, as after a restart) the Nodes are listed
// again. A list replaces every node's state at once, so the count after it is the count of one
// consistent snapshot: what happened during an outage is not seen, but no false maximum is made
// up from nodes' states of different moments.
type Watcher struct {
	mu    sync.Mutex
	nodes map[string]*corev1.Node
	max   int
	worst []string
	// relists counts lists after the first (each one a broken watch that could not be resumed).
	relists int
	synced  chan struct{}
}

// Watch starts a Watcher of the Nodes matching selector; it stops with ctx. It returns once the
// first list is in.
func Watch(ctx context.Context, cfg *rest.Config, selector string) (*Watcher, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 0
	// A dialer of its own keeps client-go from sharing a cached transport (and so a connection)
	// with the test's other clients.
	cfg.Dial = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	w := &Watcher{nodes: map[string]*corev1.Node{}, synced: make(chan struct{})}
	go w.run(ctx, cs, selector)
	select {
	case <-w.synced:
		return w, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (w *Watcher) run(ctx context.Context, cs kubernetes.Interface, selector string) {
	first := true
	for ctx.Err() == nil {
		list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			Sleep(ctx, 200*time.Millisecond)
			continue
		}
		w.replace(list.Items, first)
		if first {
			close(w.synced)
			first = false
		}
		w.follow(ctx, cs, selector, list.ResourceVersion)
	}
}

// follow watches from rv, resuming a broken watch from the last version seen, until the watch
// cannot be resumed (the caller lists again) or ctx ends.
func (w *Watcher) follow(ctx context.Context, cs kubernetes.Interface, selector, rv string) {
	for ctx.Err() == nil {
		wi, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				return
			}
			Sleep(ctx, 200*time.Millisecond)
			continue
		}
		for ev := range wi.ResultChan() {
			switch ev.Type {
			case watch.Error:
				wi.Stop()
				if st := apierrors.FromObject(ev.Object); apierrors.IsResourceExpired(st) || apierrors.IsGone(st) {
					return
				}
			case watch.Bookmark:
				if n, ok := ev.Object.(*corev1.Node); ok {
					rv = n.ResourceVersion
				}
			case watch.Added, watch.Modified, watch.Deleted:
				n, ok := ev.Object.(*corev1.Node)
				if !ok {
					continue
				}
				rv = n.ResourceVersion
				w.observe(ev.Type, n)
			}
		}
		wi.Stop()
		Sleep(ctx, 100*time.Millisecond)
	}
}

// replace takes a list as the whole current state.
func (w *Watcher) replace(nodes []corev1.Node, first bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !first {
		w.relists++
	}
	clear(w.nodes)
	for i := range nodes {
		w.nodes[nodes[i].Name] = &nodes[i]
	}
	w.count()
}

func (w *Watcher) observe(kind watch.EventType, n *corev1.Node) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if kind == watch.Deleted {
		delete(w.nodes, n.Name)
		return
	}
	w.nodes[n.Name] = n
	w.count()
}

// count records the current number of unavailable or cordoned managed nodes if it is a maximum.
func (w *Watcher) count() {
	out := w.unavailable()
	if len(out) > w.max {
		w.max, w.worst = len(out), out
	}
}

func (w *Watcher) unavailable() []string {
	var out []string
	for name, n := range w.nodes {
		if rollout.Managed(n) && (rollout.Unavailable(n) || n.Spec.Unschedulable) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Reset forgets the maximum, keeping the nodes' current state; the
// maximum starts again from the nodes unavailable now.
func (w *Watcher) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.max, w.worst = 0, nil
	w.count()
}

// MaxUnavailable is the most nodes seen unavailable or cordoned at once since the last reset,
// and which they were.
func (w *Watcher) MaxUnavailable() (int, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.max, w.worst
}

// Unavailable names the nodes unavailable or cordoned in the watcher's latest state.
func (w *Watcher) Unavailable() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.unavailable()
}

// Relists is how many times the watch could not be resumed and the Nodes were listed again.
func (w *Watcher) Relists() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.relists
}
