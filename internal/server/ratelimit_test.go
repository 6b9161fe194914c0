package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mco-dev/mco/internal/testenv"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestClientLimiter(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	l := newClientLimiter(RateLimit{PerSecond: 2, Burst: 3}, clock.now)

	for i := range 3 {
		if r := l.allow("10.0.0.1"); r != nil {
			t.Fatalf("request %d within the burst refused (retry after %v)", i, r.retryAfter)
		}
	}
	r := l.allow("10.0.0.1")
	if r == nil {
		t.Fatal("request past the burst allowed")
	}
	if r.retryAfter != 500*time.Millisecond || !r.log {
		t.Errorf("first refusal: retryAfter %v log %v, want 500ms and logged", r.retryAfter, r.log)
	}
	if r := l.allow("10.0.0.1"); r == nil || r.log {
		t.Errorf("second refusal within a minute: %+v, want refused and not logged", r)
	}
	// Another address has its own bucket.
	if r := l.allow("10.0.0.2"); r != nil {
		t.Error("a second client was limited by the first's requests")
	}
	// A refused request costs nothing: half a second later exactly one more is allowed.
	clock.advance(500 * time.Millisecond)
	if r := l.allow("10.0.0.1"); r != nil {
		t.Errorf("refilled token refused: %+v", r)
	}
	if r := l.allow("10.0.0.1"); r == nil {
		t.Error("second request after one refill allowed")
	}
	clock.advance(time.Minute)
	if r := l.allow("10.0.0.1"); r != nil {
		t.Error("client refused after a minute idle")
	}
}

// TestClientLimiterForgetsIdleClients: memory is bounded by the clients active within a
// bucket's refill time; an idle client is swept, and past the cap new addresses share one
// bucket instead of going unlimited.
func TestClientLimiterForgetsIdleClients(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	l := newClientLimiter(RateLimit{PerSecond: 1, Burst: 2}, clock.now)
	for i := range 5000 {
		l.allow(fmt.Sprintf("10.1.%d.%d", i/256, i%256))
	}
	if n := l.tracked(); n != 5000 {
		t.Fatalf("tracked %d clients, want 5000", n)
	}
	clock.advance(3 * time.Second) // every bucket refilled
	// Sweeps run each time the map doubles (1024, 2048, 4096, 8192 ...): 4000 new clients take
	// it past 8192, and the sweep keeps only the new ones, whose buckets are not full.
	for i := range 4000 {
		l.allow(fmt.Sprintf("10.2.%d.%d", i/256, i%256))
	}
	if n := l.tracked(); n != 4000 {
		t.Errorf("tracked %d clients after the first 5000 went idle, want the 4000 active ones", n)
	}

	l = newClientLimiter(RateLimit{PerSecond: 1, Burst: 2}, clock.now)
	l.maxClients = 10
	for i := range 10 {
		l.allow(fmt.Sprintf("10.3.0.%d", i))
	}
	// Two new addresses past the cap share the overflow bucket (burst 2), so the third
	// request among them is refused.
	if l.allow("10.4.0.1") != nil || l.allow("10.4.0.2") != nil {
		t.Fatal("overflow bucket refused within its burst")
	}
	if l.allow("10.4.0.3") == nil {
		t.Error("new addresses past the cap went unlimited")
	}
}

// TestRateLimitLetsAFleetThroughAndStopsAScraper: 500 machines booting at once, each asking
// three times (a first try and two Ignition retries), all get through; one address asking
// 200 times gets its burst and then 503 with Retry-After; /healthz is never limited.
func TestRateLimitLetsAFleetThroughAndStopsAScraper(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	reg := prometheus.NewRegistry()
	h := limitConfigRequests(ok, RateLimit{PerSecond: DefaultRateLimitPerSecond, Burst: DefaultRateLimitBurst}, NewMetrics(reg), discardLogger())
	get := func(addr, path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.RemoteAddr = addr
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for m := range 500 {
		for try := range 3 {
			addr := fmt.Sprintf("10.0.%d.%d:%d", m/256, m%256, 40000+try)
			if rec := get(addr, "/config/worker"); rec.Code != http.StatusOK {
				t.Fatalf("machine %d try %d: %d", m, try, rec.Code)
			}
		}
	}
	served, limited := 0, 0
	for i := range 200 {
		rec := get(fmt.Sprintf("192.0.2.7:%d", 50000+i), "/config/worker")
		switch rec.Code {
		case http.StatusOK:
			served++
		case http.StatusServiceUnavailable:
			limited++
			if ra := rec.Header().Get("Retry-After"); ra == "" || ra == "0" {
				t.Fatalf("503 without a useful Retry-After: %q", ra)
			}
		default:
			t.Fatalf("scraper got %d", rec.Code)
		}
	}
	// A few tokens may refill while the loop runs; never more than a second's worth.
	if served < DefaultRateLimitBurst || served > DefaultRateLimitBurst+DefaultRateLimitPerSecond {
		t.Errorf("scraper served %d of 200, want about the burst (%d)", served, DefaultRateLimitBurst)
	}
	if n := counterValue(t, reg, "mcs_config_requests_rate_limited_total"); n != float64(limited) {
		t.Errorf("rate-limited counter %v, want %d", n, limited)
	}
	for range 100 {
		if rec := get("192.0.2.7:1", "/healthz"); rec.Code != http.StatusOK {
			t.Fatalf("/healthz limited: %d", rec.Code)
		}
	}
}

func counterValue(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("metric %s not registered", name)
	return 0
}

// TestRealIgnitionWaitsOutTheRateLimit: a machine over the limit is answered 503, which the
// real Ignition client retries (it would give up on a 429), so it still boots.
func TestRealIgnitionWaitsOutTheRateLimit(t *testing.T) {
	dir := t.TempDir()
	ca := testenv.NewServingCA(t, dir)
	bootstrapDir := writeBootstrapDir(t, filepath.Join(dir, "bootstrap"), e2eIgnition)
	tokensFile := filepath.Join(dir, "tokens.yaml")
	writeFile(t, tokensFile, "worker:\n  token: "+e2eToken+"\n")

	url := startTLSServer(t, ca, BootstrapOptions{Dir: bootstrapDir, TokensFile: tokensFile}, func(h http.Handler) http.Handler {
		return limitConfigRequests(h, RateLimit{PerSecond: 0.5, Burst: 1}, NewMetrics(nil), discardLogger())
	})

	// Use up 127.0.0.1's one token, so Ignition's first attempt is refused.
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.CAPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	resp, err := client.Get(url + "/config/worker")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	root, out, err := testenv.RunIgnition(t, pointerConfig(t, url, ca.CAPEM, e2eToken, "3.4.0"))
	if err != nil {
		t.Fatalf("ignition failed behind the rate limit: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Service Unavailable") {
		t.Errorf("ignition was never refused, so the test proves nothing:\n%s", out)
	}
	assertFile(t, root, "/etc/e2e/hello.txt", "hello from mco\n", 0o644)
}

// BenchmarkRateLimitCheck is what the limit adds to each /config/ request: one bucket lookup
// and reservation, across 10,000 client addresses.
func BenchmarkRateLimitCheck(b *testing.B) {
	l := newClientLimiter(RateLimit{PerSecond: 1e9, Burst: 1 << 20}, time.Now)
	addrs := make([]string, 10_000)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if l.allow(addrs[i%len(addrs)]) != nil {
			b.Fatal("refused")
		}
		i++
	}
}
