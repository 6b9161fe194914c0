// Package metricset lists the Prometheus metrics mco's components register: name, type,
// labels and which component exports them. The tests of config/prometheus, config/grafana
// and docs/metrics.md check rules, dashboards and documentation against it, so a metric
// renamed in code fails them instead of an alert silently never firing.
package metricset

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/mco-dev/mco/internal/controller/bootimage"
	"github.com/mco-dev/mco/internal/controller/drain"
	"github.com/mco-dev/mco/internal/controller/node"
	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/server"
)

// The components, as docs/metrics.md names them.
const (
	Controller = "controller"
	Server     = "server"
	Daemon     = "daemon"
)

// Metric is one registered metric family.
type Metric struct {
	Name     string
	Type     string // counter, gauge, histogram or summary
	Labels   []string
	Exporter string // Controller, Server or Daemon
}

// Registered returns every metric mco's own code registers, sorted by name. It leaves out what
// the libraries add by themselves (go_*, process_*, controller-runtime's controller_runtime_*,
// workqueue_*, rest_client_*, leader_election_*, certwatcher_*): docs/metrics.md points at theirs.
func Registered() ([]Metric, error) {
	rec := &recorder{}
	rec.exporter = Controller
	for _, c := range append(append(node.Collectors(), drain.Collectors()...), bootimage.Collectors()...) {
		if err := rec.Register(c); err != nil {
			return nil, err
		}
	}
	rec.exporter = Server
	server.NewMetrics(rec)
	rec.exporter = Daemon
	daemon.RegisterMetrics(rec)
	if rec.err != nil {
		return nil, rec.err
	}
	sort.Slice(rec.metrics, func(i, j int) bool { return rec.metrics[i].Name < rec.metrics[j].Name })
	return rec.metrics, nil
}

// ByName indexes metrics by name.
func ByName(ms []Metric) map[string]Metric {
	out := make(map[string]Metric, len(ms))
	for _, m := range ms {
		out[m.Name] = m
	}
	return out
}

// Series is the metric a PromQL selector's name belongs to: a histogram's name_bucket,
// name_sum and name_count are series of name.
func Series(known map[string]Metric, name string) (Metric, bool) {
	if m, ok := known[name]; ok {
		return m, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if m, ok := known[base]; ok && (m.Type == "histogram" || m.Type == "summary" && suffix != "_bucket") {
				return m, true
			}
		}
	}
	return Metric{}, false
}

// recorder is a Registerer that only describes: the packages register their collectors with it
// exactly as with the real registries, and it notes what they describe.
type recorder struct {
	exporter string
	metrics  []Metric
	err      error
}

var _ prometheus.Registerer = (*recorder)(nil)

func (r *recorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 16)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		name, labels, err := parseDesc(d)
		if err != nil {
			r.err = err
			continue
		}
		r.metrics = append(r.metrics, Metric{Name: name, Type: typeOf(c), Labels: labels, Exporter: r.exporter})
	}
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *recorder) Unregister(prometheus.Collector) bool { return false }

// Desc keeps its name and labels unexported; String is the one documented way to read them.
var descPattern = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*"), .*variableLabels: \{([^}]*)\}\}$`)

func parseDesc(d *prometheus.Desc) (string, []string, error) {
	m := descPattern.FindStringSubmatch(d.String())
	if m == nil {
		return "", nil, fmt.Errorf("cannot read the metric name out of %s", d)
	}
	name, err := strconv.Unquote(m[1])
	if err != nil {
		return "", nil, fmt.Errorf("cannot read the metric name out of %s: %w", d, err)
	}
	var labels []string
	for _, l := range strings.Split(m[2], ",") {
		if l = strings.TrimSpace(l); l != "" {
			labels = append(labels, strings.TrimSuffix(strings.TrimPrefix(l, "c("), ")"))
		}
	}
	return name, labels, nil
}

// typeOf tells the kind of a collector: vectors by their Go type, single metrics by what they
// write (a Gauge also has Inc and Add, a Summary also has Observe).
func typeOf(c prometheus.Collector) string {
	switch c.(type) {
	case *prometheus.CounterVec:
		return "counter"
	case *prometheus.GaugeVec:
		return "gauge"
	case *prometheus.HistogramVec:
		return "histogram"
	case *prometheus.SummaryVec:
		return "summary"
	}
	m, ok := c.(prometheus.Metric)
	if !ok {
		return "untyped"
	}
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		return "untyped"
	}
	switch {
	case out.Counter != nil:
		return "counter"
	case out.Gauge != nil:
		return "gauge"
	case out.Histogram != nil:
		return "histogram"
	case out.Summary != nil:
		return "summary"
	}
	return "untyped"
}
