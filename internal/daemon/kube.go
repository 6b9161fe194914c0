package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/daemon/plan"
)

// agentScheme knows what the agent reads and writes: its Node and events, MachineConfigs, its
// MachineConfigNode, MachineConfiguration and MachineConfigPoolRollouts. The shared scheme also registers the groups only
// controllers use (CRDs, MachineSets), whose code every node would then page in.
var agentScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(mcfgv1.Install(s))
	utilruntime.Must(operatorv1.Install(s))
	utilruntime.Must(rolloutv1.AddToScheme(s)) // the pool's node boot timeout (bootguard_agent.go)
	return s
}()

// cluster is the agent's view of the API: its own Node (watched), rendered configs and the
// disruption policy (read when needed, never cached: the agent is idle most of the time).
type cluster struct {
	nodeName string
	client   client.Client
	store    cache.Store
	informer cache.SharedIndexInformer
	recorder record.EventRecorder
	stop     func()
	// mu guards written: the newest Node the agent's own reads and writes returned, kept beside
	// the informer's store and never put into it (see remember).
	mu      sync.Mutex
	written *corev1.Node
}

func newCluster(cfg *rest.Config, nodeName string, onChange func()) (*cluster, error) {
	// Only the core client: the whole clientset links every API group's client, which the
	// node build of mco does not need and would page in.
	cs, err := typedcorev1.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: agentScheme})
	if err != nil {
		return nil, err
	}
	selector := fields.OneTermEqualSelector("metadata.name", nodeName).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = selector
			return cs.Nodes().List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			return cs.Nodes().Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &corev1.Node{}, 0, cache.Indexers{})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { onChange() },
		UpdateFunc: func(any, any) { onChange() },
	})
	broadcaster := record.NewBroadcaster()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.Events("")})
	return &cluster{
		nodeName: nodeName, client: c, store: inf.GetStore(), informer: inf,
		recorder: broadcaster.NewRecorder(agentScheme, corev1.EventSource{Component: "machineconfigdaemon", Host: nodeName}),
		stop:     broadcaster.Shutdown,
	}, nil
}

func (c *cluster) run(ctx context.Context) { c.informer.RunWithContext(ctx) }

func (c *cluster) synced(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced)
}

// node is the newest Node the agent knows, nil until it exists: the informer's copy, or the one
// its own last read or write returned if that is newer.
func (c *cluster) node() *corev1.Node {
	var watched *corev1.Node
	if obj, ok, err := c.store.GetByKey(c.nodeName); err == nil && ok {
		watched = obj.(*corev1.Node)
	}
	c.mu.Lock()
	written := c.written
	c.mu.Unlock()
	if written != nil && (watched == nil || newer(written, watched)) {
		return written
	}
	return watched
}

// patchAnnotations sets the given annotations; a nil value deletes one. A merge patch touches
// nothing else, so it cannot undo the controllers' writes to the same Node.
func (c *cluster) patchAnnotations(ctx context.Context, set map[string]*string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": set}})
	if err != nil {
		return err
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: c.nodeName}}
	if err := c.client.Patch(ctx, n, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("updating annotations of node %s: %w", c.nodeName, err)
	}
	// Make the next sync see our own write at once, not act on the state before it.
	c.remember(n)
	return nil
}

// remember keeps a Node read from or written to the API server for node(), which serves it
// until the informer has something newer. It never writes into the informer's store: the drain
// controller often answers before a write's response is processed, and an older object put
// there would hide that answer until some unrelated change to the Node (seen: a node stuck
// Working after its uncordon; checking the store's version first still lost the race when the
// informer stored the answer between the check and the put, seen in the e2e suite).
func (c *cluster) remember(n *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.written == nil || newer(n, c.written) {
		c.written = n
	}
}

// newer reports whether a is a later version of the Node than b. Resource versions of one
// resource are comparable (KEP-5504); if either is malformed, nothing is assumed newer.
func newer(a, b *corev1.Node) bool {
	cmp, err := resourceversion.CompareResourceVersion(a.ResourceVersion, b.ResourceVersion)
	return err == nil && cmp > 0
}

// nodeRef is the Node as events name it; before the informer has it, the name stands in for
// the UID.
func (c *cluster) nodeRef() *corev1.ObjectReference {
	ref := &corev1.ObjectReference{Kind: "Node", Name: c.nodeName, UID: types.UID(c.nodeName)}
	if n := c.node(); n != nil {
		ref.UID = n.UID
	}
	return ref
}

func (c *cluster) event(eventType, reason, format string, args ...any) {
	c.recorder.Eventf(c.nodeRef(), eventType, reason, format, args...)
}

// eventNow writes an event before returning. The recorder sends asynchronously, which loses the
// last event before a reboot (or the process restart that simulates one).
func (c *cluster) eventNow(ctx context.Context, eventType, reason, format string, args ...any) {
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: c.nodeName + ".", Namespace: metav1.NamespaceDefault},
		InvolvedObject: *c.nodeRef(), Type: eventType, Reason: reason, Message: fmt.Sprintf(format, args...),
		Source:         corev1.EventSource{Component: "machineconfigdaemon", Host: c.nodeName},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if err := c.client.Create(ctx, ev); err != nil {
		c.event(eventType, reason, format, args...)
	}
}

func (c *cluster) machineConfig(ctx context.Context, name string) (*mcfgv1.MachineConfig, error) {
	mc := &mcfgv1.MachineConfig{}
	if err := c.client.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		return nil, fmt.Errorf("reading rendered config %s: %w", name, err)
	}
	return mc, nil
}

// policies reads MachineConfiguration `cluster`; without one, the defaults apply.
func (c *cluster) policies(ctx context.Context) (plan.Policies, error) {
	p, _, err := plan.ClusterPolicies(ctx, c.client)
	return p, err
}

var retryDelays = struct{ min, max time.Duration }{time.Second, time.Minute}

// machineConfigNode reads the Node's MachineConfigNode.
func (c *cluster) machineConfigNode(ctx context.Context) (*mcfgv1.MachineConfigNode, error) {
	m := &mcfgv1.MachineConfigNode{}
	if err := c.client.Get(ctx, client.ObjectKey{Name: c.nodeName}, m); err != nil {
		return nil, fmt.Errorf("reading MachineConfigNode %s: %w", c.nodeName, err)
	}
	return m, nil
}

// patchMachineConfigNodeStatus replaces the conditions, config versions and observed generation
// in the status of the Node's MachineConfigNode and returns the object stored. The agent is
// their only writer, so a merge patch without a resourceVersion: the controller writes only the
// spec.
func (c *cluster) patchMachineConfigNodeStatus(ctx context.Context, st mcfgv1.MachineConfigNodeStatus) (*mcfgv1.MachineConfigNode, error) {
	status := map[string]any{"conditions": st.Conditions, "configVersion": st.ConfigVersion}
	if st.ObservedGeneration > 0 { // the schema's minimum is 1
		status["observedGeneration"] = st.ObservedGeneration
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return nil, err
	}
	m := &mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: c.nodeName}}
	if err := c.client.Status().Patch(ctx, m, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return nil, fmt.Errorf("writing the status of MachineConfigNode %s: %w", c.nodeName, err)
	}
	return m, nil
}
