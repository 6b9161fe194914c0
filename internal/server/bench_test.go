package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

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
