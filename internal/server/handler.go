package server

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mco-dev/mco/internal/etcdindex"
)

const configPathPrefix = "/config/"

var (
	contentTypeJSON = []string{"application/json"}
	contentTypeText = []string{"text/plain; charset=utf-8"}
	noSniff         = []string{"nosniff"}
	zeroLength      = []string{"0"}
)

// Handler answers the Machine Config Server's HTTP API:
//
//	GET|HEAD /config/<pool>              the pool's config as Ignition (see serveConfig)
//	GET|HEAD /config/<pool>?etcd_index=N  the same, templated with N where the pool allows it
//	GET|HEAD /healthz                    200
//	anything else                        404; methods other than GET and HEAD get 405
//
// Error responses have empty bodies, as in the original: a booting machine logs only the code.
// The exception are etcd_index refusals, which carry their reason as plain text (one line per
// content that cannot be templated).
//
// A pool without a token configured is refused (403) unless allowUnauthenticated: its config
// embeds the bootstrap kubeconfig, which must not go to whoever can reach the port.
type Handler struct {
	store   *Store
	metrics *Metrics
	log     *slog.Logger
	now     func() time.Time

	allowUnauthenticated bool
	// openPools are the pools already logged as served without a token.
	openPools sync.Map
}

// withUnauthenticated makes h serve pools that have no token to anyone when allow is set.
func (h *Handler) withUnauthenticated(allow bool) *Handler {
	h.allowUnauthenticated = allow
	return h
}

// NewHandler serves the pools in store, each only to requests with its token.
func NewHandler(store *Store, metrics *Metrics, log *slog.Logger) *Handler {
	if metrics == nil {
		metrics = NewMetrics(nil)
	}
	if log == nil {
		log = slog.Default()
	}
	return &Handler{store: store, metrics: metrics, log: log, now: time.Now}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header()["Allow"] = []string{"GET, HEAD"}
		emptyResponse(w, http.StatusMethodNotAllowed)
		return
	}
	switch {
	case r.URL.Path == "/healthz":
		emptyResponse(w, http.StatusOK)
	case strings.HasPrefix(r.URL.Path, configPathPrefix):
		h.serveConfig(w, r, strings.TrimPrefix(r.URL.Path, configPathPrefix))
	default:
		emptyResponse(w, http.StatusNotFound)
	}
}

// serveConfig answers /config/<pool>: 404 for unknown pools, 403 without a valid token (see
// authorize; each refusal is one audit log line and counted by reason), 400 for an Accept
// header naming a spec we cannot serve or a malformed etcd_index (on pools that template it),
// 500 when the config cannot be built (a content that cannot be templated is named in the body
// and counted), 304 for a matching If-None-Match, else the cached bytes: per spec version, and
// per (index, spec version) for etcd_index requests.
func (h *Handler) serveConfig(w http.ResponseWriter, r *http.Request, pool string) {
	start := h.now()
	if !h.store.Loaded() {
		// Still reading pools: "try again" rather than a misleading 404.
		h.finish(w, "unknown", http.StatusServiceUnavailable, "", start)
		return
	}
	// A pool name never holds "/": refuse /config/<pool>/<more> before looking anything up.
	if strings.Contains(pool, "/") {
		h.finish(w, "unknown", http.StatusNotFound, "", start)
		return
	}
	entry := h.store.Get(pool)
	if entry == nil {
		h.finish(w, "unknown", http.StatusNotFound, "", start)
		return
	}
	if refusal := authorize(entry.state.Tokens, h.allowUnauthenticated, r.Header.Get("Authorization"), start); refusal != "" {
		h.log.Warn("refused config request", "audit", true, "pool", pool, "client", r.RemoteAddr,
			"userAgent", r.UserAgent(), "reason", string(refusal))
		h.metrics.refused.WithLabelValues(pool, string(refusal)).Inc()
		h.finish(w, pool, http.StatusForbidden, "", start)
		return
	}
	if entry.state.Tokens == nil {
		h.noteOpen(pool)
	}
	if entry.state.Served.Config == nil {
		code := http.StatusInternalServerError
		if entry.state.NotFound {
			code = http.StatusNotFound
		}
		h.log.Error("pool has no config to serve", "pool", pool, "err", entry.state.Err)
		h.finish(w, pool, code, "", start)
		return
	}
	version, err := NegotiateVersion(r.Header.Get("Accept"))
	if err != nil {
		h.log.Info("bad Accept header", "pool", pool, "accept", r.Header.Get("Accept"), "err", err)
		h.finish(w, pool, http.StatusBadRequest, "", start)
		return
	}
	index, templated, reason := requestedEtcdIndex(r.URL, entry.state.EtcdIndex)
	if reason != nil {
		code := http.StatusBadRequest
		if errors.Is(reason, errEtcdIndexPolicy) {
			code = http.StatusInternalServerError
			h.log.Error("cannot template config", "pool", pool, "err", reason)
		} else {
			h.log.Info("bad etcd_index", "pool", pool, "query", r.URL.RawQuery, "err", reason)
		}
		h.finishWithReason(w, r, pool, code, version.String(), reason, start)
		return
	}
	var resp *response
	if templated {
		resp, err = entry.templatedResponse(version, index)
	} else {
		resp, err = entry.response(version)
	}
	if err != nil {
		h.log.Error("cannot build config", "pool", pool, "config", entry.state.Served.Config.Name, "version", version.String(),
			etcdIndexAttr(templated, index), "err", err)
		if _, ok := errors.AsType[*etcdindex.Error](err); ok {
			// The reason names the content, as the log does: the client holds the pool's token,
			// so it may read what the config says, and a person behind curl needs it.
			h.metrics.templateFailures.WithLabelValues(pool).Inc()
			h.finishWithReason(w, r, pool, http.StatusInternalServerError, version.String(), err, start)
			return
		}
		h.finish(w, pool, http.StatusInternalServerError, version.String(), start)
		return
	}

	header := w.Header()
	header["Etag"] = resp.etagHeader
	code := http.StatusOK
	if etagMatches(r.Header.Get("If-None-Match"), resp.etag) {
		code = http.StatusNotModified
		w.WriteHeader(code)
	} else {
		header["Content-Type"] = contentTypeJSON
		header["Content-Length"] = resp.contentLength
		w.WriteHeader(code)
		if r.Method != http.MethodHead {
			_, _ = w.Write(resp.body)
		}
	}
	if templated {
		h.log.Info("served config", "pool", pool, "config", entry.state.Served.Config.Name, "etcdIndex", index, "version", resp.version,
			"code", code, "method", r.Method, "client", r.RemoteAddr, "userAgent", r.UserAgent())
	} else {
		// Apart, so the plain path (every worker) pays nothing for the etcd_index attribute.
		h.log.Info("served config", "pool", pool, "config", entry.state.Served.Config.Name, "version", resp.version,
			"code", code, "method", r.Method, "client", r.RemoteAddr, "userAgent", r.UserAgent())
	}
	sent := 0
	if code == http.StatusOK && r.Method != http.MethodHead {
		sent = len(resp.body)
	}
	h.metrics.observe(pool, code, resp.version, sent, h.now().Sub(start).Seconds())
}

// noteOpen warns once per pool and process that it is served without a token.
func (h *Handler) noteOpen(pool string) {
	if _, seen := h.openPools.LoadOrStore(pool, true); !seen {
		h.log.Warn("serving a pool that has no token to anyone (--allow-unauthenticated)", "pool", pool)
	}
}

func (h *Handler) finish(w http.ResponseWriter, pool string, code int, version string, start time.Time) {
	emptyResponse(w, code)
	h.metrics.observe(pool, code, version, 0, h.now().Sub(start).Seconds())
}

// finishWithReason answers code with reason as plain text: the etcd_index refusals say
// why, since the parameter is written by hand into pointer configs (everything else the
// handler refuses has an empty body, see Handler).
func (h *Handler) finishWithReason(w http.ResponseWriter, r *http.Request, pool string, code int, version string, reason error, start time.Time) {
	body := []byte(reason.Error() + "\n")
	header := w.Header()
	header["Content-Type"] = contentTypeText
	header["X-Content-Type-Options"] = noSniff
	header["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
	h.metrics.observe(pool, code, version, 0, h.now().Sub(start).Seconds())
}

func emptyResponse(w http.ResponseWriter, code int) {
	w.Header()["Content-Length"] = zeroLength
	w.WriteHeader(code)
}

// etagMatches implements the If-None-Match list and "*" forms (weak comparison: W/ prefixes
// are ignored, as RFC 9110 requires for If-None-Match).
func etagMatches(ifNoneMatch, etag string) bool {
	if ifNoneMatch == "" {
		return false
	}
	for _, candidate := range strings.Split(ifNoneMatch, ",") {
		candidate = strings.TrimPrefix(strings.TrimSpace(candidate), "W/")
		if candidate == "*" || candidate == etag {
			return true
		}
	}
	return false
}
