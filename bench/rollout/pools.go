package main

import (
	"context"
	"fmt"
	"sync"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/dev/nodesim"
	"github.com/mco-dev/mco/internal/protocol"
)

// benchPool is a pool the rollout runs in and how many of the nodes it holds.
type benchPool struct {
	name  string
	nodes int
	// initial and target are its rendered configs before and after the change.
	initial, target string
}

// benchPools are the worker pool alone (count 1), or count custom pools bench-0 … that each
// take worker's MachineConfigs and their own role's, as an OpenShift custom pool does, with the
// nodes spread over them round robin; the worker pool is then empty. The change, a worker
// MachineConfig, rolls out to every pool at once.
func benchPools(count, nodes int) []*benchPool {
	if count <= 1 {
		return []*benchPool{{name: protocol.WorkerPool, nodes: nodes}}
	}
	pools := make([]*benchPool, count)
	for i := range pools {
		pools[i] = &benchPool{name: fmt.Sprintf("bench-%d", i), nodes: nodes / count}
		if i < nodes%count {
			pools[i].nodes++
		}
	}
	return pools
}

// createPools creates the worker pool and the custom pools.
func createPools(ctx context.Context, c client.Client, pools []*benchPool, maxUnavailable intstr.IntOrString) error {
	worker := &mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: protocol.WorkerPool},
		Spec: mcfgv1.MachineConfigPoolSpec{
			MachineConfigSelector: &metav1.LabelSelector{MatchLabels: map[string]string{protocol.RoleLabel: protocol.WorkerPool}},
			NodeSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{protocol.WorkerRoleLabel: ""}},
			MaxUnavailable:        &maxUnavailable,
		},
	}
	if err := c.Create(ctx, worker); err != nil {
		return err
	}
	for _, p := range pools {
		if p.name == protocol.WorkerPool {
			continue
		}
		custom := &mcfgv1.MachineConfigPool{
			ObjectMeta: metav1.ObjectMeta{Name: p.name},
			Spec: mcfgv1.MachineConfigPoolSpec{
				MachineConfigSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: protocol.RoleLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{protocol.WorkerPool, p.name},
				}}},
				NodeSelector:   &metav1.LabelSelector{MatchLabels: map[string]string{p.roleLabel(): ""}},
				MaxUnavailable: &maxUnavailable,
			},
		}
		if err := c.Create(ctx, custom); err != nil {
			return err
		}
	}
	return nil
}

func (p *benchPool) roleLabel() string { return "node-role.kubernetes.io/" + p.name }

// createNodes creates each pool's nodes on its initial config, 16 at a time: every node has the
// worker role, a custom pool's nodes its role too (the custom pool wins, as in OpenShift).
func createNodes(ctx context.Context, c client.Client, pools []*benchPool) error {
	var wg sync.WaitGroup
	total := 0
	for _, p := range pools {
		total += p.nodes
	}
	errs := make(chan error, total)
	sem := make(chan struct{}, 16)
	i := 0
	for _, p := range pools {
		labels := map[string]string{protocol.WorkerRoleLabel: ""}
		if p.name != protocol.WorkerPool {
			labels[p.roleLabel()] = ""
		}
		for range p.nodes {
			name := fmt.Sprintf("bench-%04d", i)
			i++
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				if _, err := nodesim.CreateNode(ctx, c, name, p.initial, labels); err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// waitPools waits until every pool meets the condition its own function gives.
func waitPools(ctx context.Context, c client.Client, pools []*benchPool, cond func(*benchPool) func(*mcfgv1.MachineConfigPool) bool) error {
	for _, p := range pools {
		if _, err := waitPool(ctx, c, p.name, cond(p)); err != nil {
			return fmt.Errorf("pool %s: %w", p.name, err)
		}
	}
	return nil
}
