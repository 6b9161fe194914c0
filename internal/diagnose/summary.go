package diagnose

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/explain"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/internal/statusview"
)

// SummaryInput is what the summary page is made of.
type SummaryInput struct {
	Collected time.Time
	// Since is how far back logs and events go.
	Since time.Duration
	// Versions are "component: version" lines (this CLI, Kubernetes, the controller).
	Versions []string
	// LogSource says where logs and journals came from.
	LogSource      string
	Pools          []mcfgv1.MachineConfigPool
	Nodes          []corev1.Node
	Rollouts       []rolloutv1.MachineConfigPoolRollout
	Failures       int
	Redactions     int
	PoolsCollected bool
	NodesCollected bool
	// Explanations are `mco explain`'s of the pools and the nodes needing attention.
	Explanations []explain.Explanation
}

// Summary is summary.txt: versions, the pools and nodes as `mco status` shows them, what
// needs attention (Attention) and, for those, what `mco explain` says.
func Summary(in SummaryInput) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "mco diagnose bundle, collected %s; logs, journals and events of the last %s\n", in.Collected.UTC().Format(time.RFC3339), in.Since)
	fmt.Fprintf(&b, "logs and journals from: %s\n\n", in.LogSource)
	for _, v := range in.Versions {
		fmt.Fprintln(&b, v)
	}
	fmt.Fprintln(&b)
	if !in.PoolsCollected || !in.NodesCollected {
		fmt.Fprintln(&b, "pools or nodes could not be read (see errors.txt); the tables below show what was")
	}
	if err := statusview.WriteTables(&b, statusview.Pools(in.Pools, in.Rollouts), statusview.Nodes(in.Pools, in.Nodes)); err != nil {
		fmt.Fprintf(&b, "(tables: %v)\n", err)
	}
	fmt.Fprintln(&b)
	if att := Attention(in.Pools, in.Nodes); len(att) > 0 {
		fmt.Fprintln(&b, "Needs attention:")
		for _, a := range att {
			fmt.Fprintf(&b, "  %s\n", a)
		}
	} else {
		fmt.Fprintln(&b, "Needs attention: nothing (no pool degraded or paused, every node Ready, schedulable and Done on its desired config)")
	}
	if len(in.Explanations) > 0 {
		fmt.Fprintln(&b, "\nmco explain (every pool, and each node above; the full text with evidence is in explain/):")
		for _, x := range in.Explanations {
			fmt.Fprintf(&b, "  %s: %s\n", x.Object, x.Summary)
			for _, why := range x.Why {
				fmt.Fprintf(&b, "    - %s\n", why)
			}
		}
	}
	fmt.Fprintln(&b)
	switch in.Failures {
	case 0:
		fmt.Fprintln(&b, "Every part was collected.")
	default:
		fmt.Fprintf(&b, "%d parts could not be collected: see %s.\n", in.Failures, ErrorsFile)
	}
	fmt.Fprintf(&b, "%d secret values in MachineConfigs were replaced by their sha256: see %s.\n", in.Redactions, RedactionsFile)
	return b.String()
}

// RedactionsFile lists what was redacted.
const RedactionsFile = "redactions.txt"

// Attention lists, one line each, the pools that are degraded, paused or have nodes waiting for
// adoption, and the nodes that are degraded, not Ready, cordoned, or not yet Done on their desired config.
func Attention(pools []mcfgv1.MachineConfigPool, nodes []corev1.Node) []string {
	var out []string
	for _, p := range pools {
		for _, c := range p.Status.Conditions {
			// NodesAwaitingAdoption: nodes mco did not boot wait for the admin's approval.
			if c.Status == corev1.ConditionTrue && (strings.HasSuffix(string(c.Type), "Degraded") || c.Type == poolcondition.NodesAwaitingAdoption) {
				out = append(out, fmt.Sprintf("pool %s: %s: %s", p.Name, c.Type, firstLine(c.Message)))
			}
		}
		if p.Spec.Paused {
			out = append(out, fmt.Sprintf("pool %s: paused: no node gets a new config until spec.paused is false", p.Name))
		}
	}
	sorted := slices.Clone(nodes)
	slices.SortFunc(sorted, func(a, b corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	for i := range sorted {
		if why := nodeAttention(&sorted[i]); len(why) > 0 {
			out = append(out, fmt.Sprintf("node %s: %s", sorted[i].Name, strings.Join(why, "; ")))
		}
	}
	return out
}

// nodeAttention says why a node needs attention: degraded, not Ready, cordoned, or not yet
// Done on its desired config; nothing for a node at rest.
func nodeAttention(n *corev1.Node) []string {
	a := n.Annotations
	var why []string
	if rollout.Degraded(n) {
		why = append(why, fmt.Sprintf("%s: %s", a[protocol.StateAnnotation], firstLine(a[protocol.ReasonAnnotation])))
	}
	// Healthy is what the pool counts a node available by, so a Ready node under disk
	// pressure, which the pool counts unavailable, is listed too.
	if !rollout.Healthy(n) {
		why = append(why, "not Ready (or disk pressure, or network unavailable)")
	}
	if n.Spec.Unschedulable {
		why = append(why, "cordoned")
	}
	switch cur, want := a[protocol.CurrentConfigAnnotation], a[protocol.DesiredConfigAnnotation]; {
	case want != "" && cur != want:
		why = append(why, fmt.Sprintf("on %s, desired %s (state %s)", orNone(cur), want, orNone(a[protocol.StateAnnotation])))
	case want != "" && !rollout.Done(n) && !rollout.Degraded(n):
		// The agent reports Working after a first boot until it has verified the node.
		why = append(why, fmt.Sprintf("on its desired config %s, but state %s, not yet Done", want, a[protocol.StateAnnotation]))
	}
	return why
}

// Explanations are `mco explain`'s for every pool and for every node that needs attention
// (nodeAttention), pools first, each sorted by name.
func Explanations(c explain.Cluster) []explain.Explanation {
	var out []explain.Explanation
	pools := slices.Clone(c.Pools)
	slices.SortFunc(pools, func(a, b mcfgv1.MachineConfigPool) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range pools {
		if x, err := explain.Pool(c, p.Name); err == nil {
			out = append(out, x)
		}
	}
	nodes := slices.Clone(c.Nodes)
	slices.SortFunc(nodes, func(a, b corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	for i := range nodes {
		if len(nodeAttention(&nodes[i])) == 0 {
			continue
		}
		if x, err := explain.Node(c, nodes[i].Name); err == nil {
			out = append(out, x)
		}
	}
	return out
}

// ExplanationFile is where an object's full explanation goes: explain/mcp-NAME.txt, explain/node-NAME.txt.
func ExplanationFile(x explain.Explanation) string {
	return "explain/" + strings.ReplaceAll(x.Object, "/", "-") + ".txt"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
