package server

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mco-dev/mco/internal/ignition"
)

const accept34 = "application/vnd.coreos.ignition+json;version=3.4.0, */*;q=0.1"

func newTestHandler(t *testing.T, pools map[string]PoolState) (*Handler, *Store) {
	t.Helper()
	store := NewStore(time.Minute)
	store.Replace(pools)
	return NewHandler(store, NewMetrics(nil), discardLogger()), store
}

func do(h http.Handler, method, path string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestHandlerRoutes(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, _ := newTestHandler(t, map[string]PoolState{
		"worker":  {Served: ServedInput{Config: testMC(t, oneFile)}, Key: "k"},
		"secured": {Served: ServedInput{Config: testMC(t, oneFile)}, Key: "k", Tokens: &PoolTokens{Token: "new", PreviousToken: "old", PreviousExpires: now.Add(time.Minute)}},
		"expired": {Served: ServedInput{Config: testMC(t, oneFile)}, Key: "k", Tokens: &PoolTokens{Token: "new", PreviousToken: "old", PreviousExpires: now.Add(-time.Second)}},
		"missing": {NotFound: true, Err: io.EOF},
		"broken":  {Err: io.EOF},
		"kargs":   {Served: ServedInput{Config: testMC(t, withNotKargs)}, Key: "k"},
	})
	h.now = func() time.Time { return now }
	// The routes of pools without tokens; TestHandlerRefusals covers the default, which refuses them.
	h.allowUnauthenticated = true
	tests := []struct {
		name, method, path string
		header             []string
		code               int
		version            string // served spec, checked in the body; "" = empty body
	}{
		{"healthz", "GET", "/healthz", nil, 200, ""},
		{"healthz head", "HEAD", "/healthz", nil, 200, ""},
		{"default is 2.2", "GET", "/config/worker", nil, 200, "2.2.0"},
		{"accept 3.4", "GET", "/config/worker", []string{"Accept", accept34}, 200, "3.4.0"},
		{"ignition 2.27 gets 3.5", "GET", "/config/worker", []string{"Accept", "application/vnd.coreos.ignition+json;version=3.6.0, */*;q=0.1"}, 200, "3.5.0"},
		{"etcd_index query ignored", "GET", "/config/worker?etcd_index=1", []string{"Accept", accept34}, 200, "3.4.0"},
		{"unknown pool", "GET", "/config/nope", nil, 404, ""},
		{"nested path", "GET", "/config/worker/extra", nil, 404, ""},
		{"other path", "GET", "/", nil, 404, ""},
		{"post", "POST", "/config/worker", nil, 405, ""},
		{"put healthz", "PUT", "/healthz", nil, 405, ""},
		{"delete unknown path", "DELETE", "/nothing", nil, 405, ""},
		{"spec 4 refused", "GET", "/config/worker", []string{"Accept", "application/vnd.coreos.ignition+json;version=4.0.0"}, 400, ""},
		{"spec 2.1 refused", "GET", "/config/worker", []string{"Accept", "application/vnd.coreos.ignition+json;version=2.1.0"}, 400, ""},
		{"spec 3.0 cannot be produced", "GET", "/config/worker", []string{"Accept", "application/vnd.coreos.ignition+json;version=3.0.0"}, 500, ""},
		{"conversion failure", "GET", "/config/kargs", []string{"Accept", "application/vnd.coreos.ignition+json;version=3.2.0"}, 500, ""},
		{"rendered config file missing", "GET", "/config/missing", nil, 404, ""},
		{"rendered config unreadable", "GET", "/config/broken", nil, 500, ""},
		{"no token, although unauthenticated pools are allowed", "GET", "/config/secured", nil, 403, ""},
		{"wrong token", "GET", "/config/secured", []string{"Authorization", "Bearer nope"}, 403, ""},
		{"basic auth is not a token", "GET", "/config/secured", []string{"Authorization", "Basic bmV3"}, 403, ""},
		{"current token", "GET", "/config/secured", []string{"Authorization", "Bearer new", "Accept", accept34}, 200, "3.4.0"},
		{"previous token in overlap", "GET", "/config/secured", []string{"Authorization", "bearer old", "Accept", accept34}, 200, "3.4.0"},
		{"previous token after overlap", "GET", "/config/expired", []string{"Authorization", "Bearer old"}, 403, ""},
		{"empty bearer token", "GET", "/config/secured", []string{"Authorization", "Bearer "}, 403, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(h, tc.method, tc.path, tc.header...)
			if rec.Code != tc.code {
				t.Fatalf("code = %d, want %d (body %.100s)", rec.Code, tc.code, rec.Body)
			}
			body := rec.Body.String()
			if tc.version == "" {
				if body != "" {
					t.Fatalf("body = %.100q, want empty", body)
				}
				if tc.code == 405 && rec.Header().Get("Allow") != "GET, HEAD" {
					t.Errorf("Allow = %q", rec.Header().Get("Allow"))
				}
				return
			}
			if !strings.Contains(body, `"version":"`+tc.version+`"`) {
				t.Fatalf("body is not spec %s: %.100s", tc.version, body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			if cl := rec.Header().Get("Content-Length"); cl != strconv.Itoa(len(body)) {
				t.Errorf("Content-Length = %s, body %d bytes", cl, len(body))
			}
			if rec.Header().Get("Etag") == "" {
				t.Error("no ETag")
			}
		})
	}
}

// TestHandlerRefusals: by default a pool without a token is refused like a request without
// one; every refusal is one audit log line and one count of its reason, with an empty body.
func TestHandlerRefusals(t *testing.T) {
	var logs bytes.Buffer
	store := NewStore(time.Minute)
	store.Replace(map[string]PoolState{
		"open":    {Served: ServedInput{Config: testMC(t, oneFile)}, Key: "k"},
		"secured": {Served: ServedInput{Config: testMC(t, oneFile)}, Key: "k", Tokens: &PoolTokens{Token: "s3cret"}},
		"broken":  {Served: ServedInput{Config: testMC(t, oneFile)}, Key: "k", Tokens: &PoolTokens{}}, // unreadable token Secret
	})
	metrics := NewMetrics(nil)
	h := NewHandler(store, metrics, slog.New(slog.NewJSONHandler(&logs, nil)))
	tests := []struct {
		name, pool string
		header     []string
		reason     Refusal // "" = served
	}{
		{"pool without a token", "open", nil, RefusedNoToken},
		{"pool without a token, whatever is presented", "open", []string{"Authorization", "Bearer s3cret"}, RefusedNoToken},
		{"no Authorization header", "secured", nil, RefusedMissingAuthorization},
		{"wrong token", "secured", []string{"Authorization", "Bearer guess"}, RefusedInvalidToken},
		{"not a bearer token", "secured", []string{"Authorization", "Basic czNjcmV0"}, RefusedInvalidToken},
		{"empty bearer token", "secured", []string{"Authorization", "Bearer"}, RefusedInvalidToken},
		{"token Secret without a token refuses every token", "broken", []string{"Authorization", "Bearer "}, RefusedInvalidToken},
		{"the token", "secured", []string{"Authorization", "Bearer s3cret"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logs.Reset()
			before := testutil.ToFloat64(metrics.refused.WithLabelValues(tc.pool, string(tc.reason)))
			req := httptest.NewRequest("GET", "/config/"+tc.pool, nil)
			req.RemoteAddr = "192.0.2.7:40000"
			req.Header.Set("User-Agent", "Ignition/2.27.0")
			for i := 0; i+1 < len(tc.header); i += 2 {
				req.Header.Set(tc.header[i], tc.header[i+1])
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if tc.reason == "" {
				if rec.Code != 200 || strings.Contains(logs.String(), `"audit"`) {
					t.Fatalf("code %d, logs %s", rec.Code, logs.String())
				}
				return
			}
			if rec.Code != 403 || rec.Body.Len() != 0 {
				t.Fatalf("code %d with %d body bytes, want an empty 403", rec.Code, rec.Body.Len())
			}
			var line map[string]any
			if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
				t.Fatalf("want exactly one JSON log line: %v\n%s", err, logs.String())
			}
			want := map[string]any{"audit": true, "pool": tc.pool, "client": "192.0.2.7:40000", "userAgent": "Ignition/2.27.0", "reason": string(tc.reason)}
			for k, v := range want {
				if line[k] != v {
					t.Errorf("audit line %s = %v, want %v (%s)", k, line[k], v, logs.String())
				}
			}
			if got := testutil.ToFloat64(metrics.refused.WithLabelValues(tc.pool, string(tc.reason))); got != before+1 {
				t.Errorf("mcs_config_requests_refused_total{pool=%q,reason=%q} went from %v to %v", tc.pool, tc.reason, before, got)
			}
		})
	}
}

// TestHandlerAllowUnauthenticated serves a pool without a token and says so once.
func TestHandlerAllowUnauthenticated(t *testing.T) {
	var logs bytes.Buffer
	store := NewStore(time.Minute)
	store.Replace(map[string]PoolState{"open": {Served: ServedInput{Config: testMC(t, oneFile)}, Key: "k"}})
	h := NewHandler(store, nil, slog.New(slog.NewTextHandler(&logs, nil))).withUnauthenticated(true)
	for range 3 {
		if rec := do(h, "GET", "/config/open"); rec.Code != 200 {
			t.Fatalf("code %d", rec.Code)
		}
	}
	if n := strings.Count(logs.String(), "has no token"); n != 1 {
		t.Errorf("%d warnings about serving without a token, want 1:\n%s", n, logs.String())
	}
}

func TestHandlerHeadAndETag(t *testing.T) {
	h, _ := newTestHandler(t, map[string]PoolState{"worker": {Served: ServedInput{Config: testMC(t, oneFile)}, Key: "k", Tokens: &PoolTokens{Token: "t"}}})
	auth := "Bearer t"
	get := do(h, "GET", "/config/worker", "Accept", accept34, "Authorization", auth)
	head := do(h, "HEAD", "/config/worker", "Accept", accept34, "Authorization", auth)
	if head.Code != 200 || head.Body.Len() != 0 {
		t.Fatalf("HEAD: %d with %d body bytes", head.Code, head.Body.Len())
	}
	if head.Header().Get("Content-Length") != strconv.Itoa(get.Body.Len()) || head.Header().Get("Etag") != get.Header().Get("Etag") {
		t.Fatalf("HEAD headers %v differ from GET %v", head.Header(), get.Header())
	}
	etag := get.Header().Get("Etag")
	for _, inm := range []string{etag, `"other", ` + etag, "W/" + etag, "*"} {
		if rec := do(h, "GET", "/config/worker", "Accept", accept34, "If-None-Match", inm, "Authorization", auth); rec.Code != 304 || rec.Body.Len() != 0 {
			t.Errorf("If-None-Match %s: %d, %d bytes", inm, rec.Code, rec.Body.Len())
		}
	}
	if rec := do(h, "GET", "/config/worker", "If-None-Match", etag, "Authorization", auth); rec.Code != 200 {
		t.Errorf("ETag of 3.4 matched the 2.2 response: %d", rec.Code)
	}
}

func TestHandlerUnavailableUntilLoaded(t *testing.T) {
	h := NewHandler(NewStore(time.Minute), nil, discardLogger())
	if rec := do(h, "GET", "/config/worker"); rec.Code != 503 {
		t.Fatalf("before the first load: %d, want 503", rec.Code)
	}
	if rec := do(h, "GET", "/healthz"); rec.Code != 200 {
		t.Fatalf("healthz before the first load: %d", rec.Code)
	}
}

func TestStoreKeepsBuildsForUnchangedKeys(t *testing.T) {
	store := NewStore(time.Minute)
	mc := testMC(t, oneFile)
	store.Replace(map[string]PoolState{"worker": {Served: ServedInput{Config: mc}, Key: "v1"}, "infra": {Served: ServedInput{Config: mc}, Key: "i1"}})
	first, err := store.Get("worker").response(ignition.V3_4)
	if err != nil {
		t.Fatal(err)
	}
	infra, _ := store.Get("infra").response(ignition.V3_4)

	store.Replace(map[string]PoolState{"worker": {Served: ServedInput{Config: mc}, Key: "v1"}, "infra": {Served: ServedInput{Config: testMC(t, withKargs)}, Key: "i2"}})
	if again, _ := store.Get("worker").response(ignition.V3_4); again != first {
		t.Error("unchanged key rebuilt the response")
	}
	if rebuilt, _ := store.Get("infra").response(ignition.V3_4); rebuilt == infra || string(rebuilt.body) == string(infra.body) {
		t.Error("changed key kept the old response")
	}
	store.Replace(map[string]PoolState{})
	if store.Get("worker") != nil {
		t.Error("removed pool still served")
	}
}

func TestConcurrentFirstRequestsBuildOnce(t *testing.T) {
	store := NewStore(time.Minute)
	store.Replace(map[string]PoolState{"worker": {Served: ServedInput{Config: testMC(t, oneFile)}, Key: "k"}})
	entry := store.Get("worker")
	var wg sync.WaitGroup
	got := make([]*response, 32)
	for i := range got {
		wg.Go(func() { got[i], _ = entry.response(ignition.V3_4) })
	}
	wg.Wait()
	for _, r := range got {
		if r == nil || r != got[0] {
			t.Fatal("concurrent first requests got different builds")
		}
	}
}

func TestPreviousTokenOverlapIsRemembered(t *testing.T) {
	store := NewStore(time.Hour)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store.now = func() time.Time { return clock }
	rotated := map[string]PoolState{"worker": {Tokens: &PoolTokens{Token: "new", PreviousToken: "old"}}}
	store.Replace(rotated)
	want := clock.Add(time.Hour)
	if got := store.Get("worker").state.Tokens.PreviousExpires; !got.Equal(want) {
		t.Fatalf("expiry = %v, want %v", got, want)
	}
	clock = clock.Add(30 * time.Minute)
	store.Replace(rotated)
	if got := store.Get("worker").state.Tokens.PreviousExpires; !got.Equal(want) {
		t.Fatalf("expiry moved on reload: %v, want %v", got, want)
	}
	if rotated["worker"].Tokens.PreviousExpires != (time.Time{}) {
		t.Fatal("Replace modified the caller's tokens")
	}
}
