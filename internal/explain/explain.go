package explain

import (
	"fmt"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/rollout"
)

// Cluster is the snapshot an explanation is made from. Callers list everything once (as `mco
// explain` and `mco diagnose` do) and ask for any number of objects.
type Cluster struct {
	// Now is the time ages and deadlines are measured against (required: the core never reads
	// the clock, so tests and bundles explain the moment they were taken).
	Now                time.Time
	Pools              []mcfgv1.MachineConfigPool
	Nodes              []corev1.Node
	MachineConfigNodes []mcfgv1.MachineConfigNode
	// Events are core/v1 events about Nodes and pools (any namespace); others are ignored.
	Events []corev1.Event
	// Policies are the MachineConfigPoolRollouts; nil where the CRD is not served.
	Policies []rolloutv1.MachineConfigPoolRollout
	// NotReadyThreshold is the node controller's --node-not-ready-threshold; 0 means its default.
	NotReadyThreshold time.Duration
	// StallThreshold is the node controller's --update-stall-threshold; 0 means its default.
	StallThreshold time.Duration
	// NodePods are the pods on a draining node and the PodDisruptionBudgets of their namespaces,
	// what its drain waits for; empty (Node "") when not read: a pool, a node not draining, a
	// diagnose bundle.
	NodePods NodePods
}

// Explanation is what an object is doing and why, in words an admin acts on.
type Explanation struct {
	// Object is "node/NAME" or "mcp/NAME".
	Object string `json:"object"`
	// Summary is one line: the state in a word or two and the most important reason.
	Summary string `json:"summary"`
	// Doing is what mco is doing with the object right now.
	Doing string `json:"doing"`
	// Why lists why the object is stuck, degraded or waiting; empty when nothing holds it.
	Why []string `json:"why,omitempty"`
	// Next is what mco will do next without anyone's help.
	Next string `json:"next"`
	// YouCan lists what the admin can do, as commands where there is one.
	YouCan []string `json:"youCan,omitempty"`
	// Evidence lists the annotations, conditions, events and MachineConfigNode status the
	// explanation rests on.
	Evidence []string `json:"evidence,omitempty"`
}

// NotFoundError is an object the snapshot does not hold.
type NotFoundError struct{ Kind, Name string }

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %q not found", e.Kind, e.Name) }

// Bounds on every list, so an explanation stays a screen long whatever the cluster's size.
const (
	maxEvents     = 6
	maxNamedNodes = 5
	maxLineLength = 400
)

func (c Cluster) threshold() time.Duration {
	if c.NotReadyThreshold > 0 {
		return c.NotReadyThreshold
	}
	return rollout.DefaultNotReadyThreshold
}

func (c Cluster) stallThreshold() time.Duration {
	if c.StallThreshold > 0 {
		return c.StallThreshold
	}
	return rollout.DefaultStallThreshold
}

func (c Cluster) node(name string) *corev1.Node {
	for i := range c.Nodes {
		if c.Nodes[i].Name == name {
			return &c.Nodes[i]
		}
	}
	return nil
}

func (c Cluster) pool(name string) *mcfgv1.MachineConfigPool {
	for i := range c.Pools {
		if c.Pools[i].Name == name {
			return &c.Pools[i]
		}
	}
	return nil
}

func (c Cluster) machineConfigNode(name string) *mcfgv1.MachineConfigNode {
	for i := range c.MachineConfigNodes {
		if c.MachineConfigNodes[i].Name == name {
			return &c.MachineConfigNodes[i]
		}
	}
	return nil
}

func (c Cluster) poolPointers() []*mcfgv1.MachineConfigPool {
	out := make([]*mcfgv1.MachineConfigPool, len(c.Pools))
	for i := range c.Pools {
		out[i] = &c.Pools[i]
	}
	return out
}

// members are the managed nodes whose primary pool is pool, as the node controller counts them.
func (c Cluster) members(pool *mcfgv1.MachineConfigPool) []*corev1.Node {
	nodes := make([]*corev1.Node, len(c.Nodes))
	for i := range c.Nodes {
		nodes[i] = &c.Nodes[i]
	}
	members, _ := rollout.Members(pool, c.poolPointers(), nodes)
	return members
}
