package drain

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// A budget refusal anywhere among the obstacles sets the node's mcc_drain_blocked_by_pdb;
// terminating pods alone do not, and the acknowledgement removes the series.
func TestBlockedByBudgetMetric(t *testing.T) {
	const node = "metrics-test-node"
	terminating := Obstacle{Pod: "ns/slow"}
	refused := Obstacle{Pod: "ns/db-0", Budgets: []string{"ns/db-pdb"}}

	recordObstacles(node, []Obstacle{terminating})
	if got := testutil.ToFloat64(blockedByBudget.WithLabelValues(node)); got != 0 {
		t.Errorf("only a terminating pod: mcc_drain_blocked_by_pdb = %v, want 0", got)
	}
	recordObstacles(node, []Obstacle{terminating, refused})
	if got := testutil.ToFloat64(blockedByBudget.WithLabelValues(node)); got != 1 {
		t.Errorf("a PDB refused an eviction: mcc_drain_blocked_by_pdb = %v, want 1", got)
	}
	drainErr.WithLabelValues(node).Set(1)
	forgetNodeMetrics(node)
	for _, vec := range []*prometheus.GaugeVec{blockedByBudget, drainErr} {
		if hasNodeSeries(vec, node) {
			t.Error("a series of the node is left after the drain was acknowledged")
		}
	}
}

// hasNodeSeries looks without creating the series (WithLabelValues would); other tests of the
// package share the vectors, so only this node's series count.
func hasNodeSeries(vec *prometheus.GaugeVec, node string) bool {
	ch := make(chan prometheus.Metric, 100)
	go func() { vec.Collect(ch); close(ch) }()
	found := false
	for m := range ch {
		var out dto.Metric
		if err := m.Write(&out); err != nil {
			continue
		}
		for _, l := range out.GetLabel() {
			found = found || l.GetName() == "node" && l.GetValue() == node
		}
	}
	return found
}
