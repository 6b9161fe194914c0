package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/vincent-petithory/dataurl"
	"k8s.io/utils/ptr"

	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/server/benchfixture"
)

// discardWriter is a ResponseWriter that keeps nothing, so the benchmark measures the handler
// and not a recorder copying 194 KB per request.
type discardWriter struct {
	header http.Header
	n      int
}

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkServeConfig is one cached /config/worker request for the ≈194 KB fixture.
func BenchmarkServeConfig(b *testing.B) {
	store := NewStore(time.Hour)
	store.Replace(map[string]PoolState{"worker": {Served: ServedInput{Config: benchfixture.MachineConfig()}, Key: "bench", Tokens: &PoolTokens{Token: "bench-token"}}})
	h := NewHandler(store, NewMetrics(nil), discardLogger())
	req := httptest.NewRequest("GET", "/config/worker", nil)
	req.Header.Set("Accept", "application/vnd.coreos.ignition+json;version=3.4.0")
	req.Header.Set("Authorization", "Bearer bench-token")
	w := &discardWriter{header: http.Header{}}
	h.ServeHTTP(w, req) // build once
	if w.n == 0 {
		b.Fatal("the request was not served")
	}
	b.SetBytes(int64(w.n))
	b.ReportAllocs()
	for b.Loop() {
		clear(w.header)
		h.ServeHTTP(w, req)
	}
}

// BenchmarkBuildServedConfig is the uncached cost, paid once per (config, spec version): what
// the original server pays on every request.
func BenchmarkBuildServedConfig(b *testing.B) {
	in := ServedInput{Config: benchfixture.MachineConfig()}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BuildServedConfig(in, ignition.V3_4); err != nil {
			b.Fatal(err)
		}
	}
}

// templatedFixture is the benchmark fixture as a master config: its ten units and ten of its
// files name the etcd member by index, the rest has no templates.
func templatedFixture(b *testing.B) *mcfgv1.MachineConfig {
	cfg := benchfixture.Ignition()
	for i := range 10 {
		unit := &cfg.Systemd.Units[i]
		unit.Contents = ptr.To(*unit.Contents + "Environment=ETCD_NAME=etcd-{{.etcd_index}}\n")
		cfg.Storage.Files[i].Contents.Source = ptr.To(*cfg.Storage.Files[i].Contents.Source + dataurl.EscapeString("\nmember = etcd-{{.etcd_index}}\n"))
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		b.Fatal(err)
	}
	mc := benchfixture.MachineConfig()
	mc.Spec.Config.Raw = raw
	return mc
}

// BenchmarkServeConfigEtcdIndex is one cached /config/master?etcd_index=1 request: the
// templated bytes come from the per-(config, index) cache.
func BenchmarkServeConfigEtcdIndex(b *testing.B) {
	store := NewStore(time.Hour)
	store.Replace(map[string]PoolState{"master": {Served: ServedInput{Config: templatedFixture(b)}, Key: "bench",
		Tokens: &PoolTokens{Token: "bench-token"}, EtcdIndex: EtcdIndexPolicy{Enabled: true}}})
	h := NewHandler(store, NewMetrics(nil), discardLogger())
	req := httptest.NewRequest("GET", "/config/master?etcd_index=1", nil)
	req.Header.Set("Accept", "application/vnd.coreos.ignition+json;version=3.4.0")
	req.Header.Set("Authorization", "Bearer bench-token")
	w := &discardWriter{header: http.Header{}}
	h.ServeHTTP(w, req) // build once
	if w.n == 0 || !strings.Contains(w.header.Get("Content-Type"), "json") {
		b.Fatal("the request was not served")
	}
	b.SetBytes(int64(w.n))
	b.ReportAllocs()
	for b.Loop() {
		clear(w.header)
		h.ServeHTTP(w, req)
	}
}

// BenchmarkBuildTemplatedServedConfig is the cache miss: parse, template, build, convert.
func BenchmarkBuildTemplatedServedConfig(b *testing.B) {
	in := ServedInput{Config: templatedFixture(b)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BuildTemplatedServedConfig(in, ignition.V3_4, 1); err != nil {
			b.Fatal(err)
		}
	}
}
