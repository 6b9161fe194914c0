package render

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/generatedmc"
)

// A KubeletConfig or ContainerRuntimeConfig its controller has not yet processed is about to
// add, change or remove a generated MachineConfig. Rendering the pool before it lands gives the
// pool a config that is superseded seconds later, and nodes that update twice (two reboots for
// one `kubectl apply` of several objects). So, as OpenShift does, a pool is not rendered while a
// generator that selects it lags its generation. Unlike OpenShift, a generator that failed does
// not hold the pool (a refused one writes nothing, so nothing is half generated), and no
// generator holds a pool longer than generatorWaitLimit: a stuck generator controller must not
// freeze every MachineConfig change of the pool.

// generatorWaitLimit bounds how long one generation of one generator may hold its pools.
const generatorWaitLimit = time.Minute

// generator is what the gate needs of a KubeletConfig or ContainerRuntimeConfig.
type generator struct {
	Kind               string
	Name               string
	UID                types.UID
	Generation         int64
	ObservedGeneration int64
	PoolSelector       *metav1.LabelSelector
	Deleting           bool
}

// pendingGenerators names, sorted, the generators that select pool (by its labels, as their
// machineConfigPoolSelector does) and whose latest generation their controller has not yet
// processed. A nil or empty selector selects no pool.
func pendingGenerators(pool *mcfgv1.MachineConfigPool, gens []generator) []generator {
	var pending []generator
	for _, g := range gens {
		if g.ObservedGeneration >= g.Generation && !g.Deleting {
			continue
		}
		if !generatedmc.Selects(g.PoolSelector, pool) {
			continue
		}
		pending = append(pending, g)
	}
	sort.Slice(pending, func(i, j int) bool {
		if pending[i].Kind != pending[j].Kind {
			return pending[i].Kind < pending[j].Kind
		}
		return pending[i].Name < pending[j].Name
	})
	return pending
}

// generatorKey identifies one generation of one generator.
type generatorKey struct {
	UID        types.UID
	Generation int64
}

// generatorClock remembers, per pool, when the gate first saw each generation holding it, so
// the wait is bounded across reconciles (the objects carry no time of their last spec change).
type generatorClock struct {
	mu    sync.Mutex
	first map[string]map[generatorKey]time.Time
}

// hold is how much longer pool waits for its pending generators: until the last of them has
// held it for generatorWaitLimit; 0 renders now. It forgets the generations that no longer hold
// the pool, so nothing piles up. A generator catching up wakes the pool through its watch.
func (c *generatorClock) hold(pool string, pending []generator, now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first == nil {
		c.first = map[string]map[generatorKey]time.Time{}
	}
	seen := c.first[pool]
	holding := make(map[generatorKey]time.Time, len(pending))
	var wait time.Duration
	for _, g := range pending {
		k := generatorKey{g.UID, g.Generation}
		t, ok := seen[k]
		if !ok {
			t = now
		}
		holding[k] = t
		wait = max(wait, t.Add(generatorWaitLimit).Sub(now))
	}
	if len(holding) == 0 {
		delete(c.first, pool)
	} else {
		c.first[pool] = holding
	}
	return wait
}

// listGenerators reads every KubeletConfig and ContainerRuntimeConfig from the cache.
func (r *Reconciler) listGenerators(ctx context.Context) ([]generator, error) {
	var kcs mcfgv1.KubeletConfigList
	if err := r.Client.List(ctx, &kcs); err != nil {
		return nil, fmt.Errorf("listing KubeletConfigs: %w", err)
	}
	var crcs mcfgv1.ContainerRuntimeConfigList
	if err := r.Client.List(ctx, &crcs); err != nil {
		return nil, fmt.Errorf("listing ContainerRuntimeConfigs: %w", err)
	}
	gens := make([]generator, 0, len(kcs.Items)+len(crcs.Items))
	for _, kc := range kcs.Items {
		gens = append(gens, generator{Kind: "KubeletConfig", Name: kc.Name, UID: kc.UID, Generation: kc.Generation,
			ObservedGeneration: kc.Status.ObservedGeneration, PoolSelector: kc.Spec.MachineConfigPoolSelector,
			Deleting: kc.DeletionTimestamp != nil && len(kc.Finalizers) > 0})
	}
	for _, crc := range crcs.Items {
		gens = append(gens, generator{Kind: "ContainerRuntimeConfig", Name: crc.Name, UID: crc.UID, Generation: crc.Generation,
			ObservedGeneration: crc.Status.ObservedGeneration, PoolSelector: crc.Spec.MachineConfigPoolSelector,
			Deleting: crc.DeletionTimestamp != nil && len(crc.Finalizers) > 0})
	}
	return gens, nil
}

// poolsForGenerator maps a KubeletConfig or ContainerRuntimeConfig event to the pools it selects,
// so a held pool renders as soon as its generator has caught up.
func (r *Reconciler) poolsForGenerator(ctx context.Context, obj client.Object) []reconcile.Request {
	var sel *metav1.LabelSelector
	switch o := obj.(type) {
	case *mcfgv1.KubeletConfig:
		sel = o.Spec.MachineConfigPoolSelector
	case *mcfgv1.ContainerRuntimeConfig:
		sel = o.Spec.MachineConfigPoolSelector
	default:
		return nil
	}
	var pools mcfgv1.MachineConfigPoolList
	if err := r.Client.List(ctx, &pools); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range pools.Items {
		if generatedmc.Selects(sel, &pools.Items[i]) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: pools.Items[i].Name}})
		}
	}
	return reqs
}

func describeGenerators(gens []generator) string {
	s := ""
	for i, g := range gens {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %s (generation %d, processed %d)", g.Kind, g.Name, g.Generation, g.ObservedGeneration)
	}
	return s
}
