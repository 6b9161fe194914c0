package monitoring

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/metricset"
	"github.com/mco-dev/mco/internal/testenv"
)

// docRow is one row of docs/metrics.md's table of mco's own metrics.
type docRow struct {
	typ, exporter string
	labels        []string
}

var backticked = regexp.MustCompile("`([^`]+)`")

// documented reads the rows of the section "## mco's own metrics": | `name` | type | `l1`, `l2` | exporter | meaning |.
func documented(t *testing.T) map[string]docRow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## mco's own metrics\n")
	if !ok {
		t.Fatal(`docs/metrics.md has no section "## mco's own metrics"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]docRow{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 7 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		var labels []string
		for _, m := range backticked.FindAllStringSubmatch(cells[3], -1) {
			labels = append(labels, m[1])
		}
		if _, dup := rows[name]; dup {
			t.Errorf("docs/metrics.md documents %s twice", name)
		}
		rows[name] = docRow{typ: strings.TrimSpace(cells[2]), labels: labels, exporter: strings.TrimSpace(cells[4])}
	}
	return rows
}

// The docs call the daemon component the agent.
var exporterNames = map[string]string{metricset.Controller: "controller", metricset.Server: "server", metricset.Daemon: "agent"}

// Every metric the code registers has its row, with the type, labels and component the code
// gives it, and every row is a metric the code registers.
func TestEveryMetricIsDocumented(t *testing.T) {
	known := registered(t)
	rows := documented(t)
	for name, m := range known {
		row, ok := rows[name]
		if !ok {
			t.Errorf("%s (%s, %s) is not documented in docs/metrics.md", name, m.Type, m.Exporter)
			continue
		}
		if row.typ != m.Type || row.exporter != exporterNames[m.Exporter] || !slices.Equal(row.labels, m.Labels) {
			t.Errorf("docs/metrics.md: %s is documented as %s %v from %s; the code registers %s %v from %s",
				name, row.typ, row.labels, row.exporter, m.Type, m.Labels, exporterNames[m.Exporter])
		}
	}
	for name := range rows {
		if _, ok := known[name]; !ok {
			t.Errorf("docs/metrics.md documents %s, which no code registers", name)
		}
	}
}
