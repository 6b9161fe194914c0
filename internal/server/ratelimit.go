package server

import (
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit bounds how often one client address may ask for /config/. A booting machine asks
// once, and Ignition retries only on failure, so a whole fleet booting at once stays far below
// it; a scraper or a token-guessing loop does not.
type RateLimit struct {
	// PerSecond is the sustained rate per client address; zero or less disables the limit.
	PerSecond float64
	// Burst is how many requests a client may make at once before the rate applies.
	Burst int
}

// Default limits: 2 requests/s sustained and 20 at once per address. Ignition's own retry
// backoff (100 ms doubling to 5 s) keeps one machine far below this even when it is refused.
const (
	DefaultRateLimitPerSecond = 2
	DefaultRateLimitBurst     = 20
	// maxTrackedClients bounds the limiter's memory. Past it, new addresses share one bucket
	// (still limited, never unlimited) until idle clients are swept.
	maxTrackedClients = 1 << 16
	overflowKey       = "overflow"
)

// clientLimiter keeps one token bucket per client address.
type clientLimiter struct {
	limit      rate.Limit
	burst      int
	now        func() time.Time
	maxClients int

	mu      sync.Mutex
	clients map[string]*clientState
	sweepAt int // len(clients) at which the next sweep runs
}

type clientState struct {
	bucket *rate.Limiter
	// loggedAt is when this client's refusals were last logged.
	loggedAt time.Time
}

func newClientLimiter(l RateLimit, now func() time.Time) *clientLimiter {
	burst := max(l.Burst, 1)
	return &clientLimiter{limit: rate.Limit(l.PerSecond), burst: burst, now: now, maxClients: maxTrackedClients, clients: map[string]*clientState{}, sweepAt: 1024}
}

// refusal says why a request was not allowed: how long until the client may ask again (for
// Retry-After), and whether this refusal should be logged (once per client per minute, so a
// flood does not become a log flood).
type refusal struct {
	retryAfter time.Duration
	log        bool
}

// allow takes one token from addr's bucket; nil means the request may go on.
func (c *clientLimiter) allow(addr string) *refusal {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := c.clients[addr]
	if cl == nil {
		if len(c.clients) >= c.sweepAt {
			c.sweep(now)
		}
		if len(c.clients) >= c.maxClients {
			addr = overflowKey
			cl = c.clients[addr]
		}
		if cl == nil {
			cl = &clientState{bucket: rate.NewLimiter(c.limit, c.burst)}
			c.clients[addr] = cl
		}
	}
	r := cl.bucket.ReserveN(now, 1)
	delay := r.DelayFrom(now)
	if delay == 0 {
		return nil
	}
	r.CancelAt(now)
	ref := &refusal{retryAfter: delay}
	if now.Sub(cl.loggedAt) >= time.Minute {
		cl.loggedAt, ref.log = now, true
	}
	return ref
}

// sweep forgets clients whose bucket has refilled: a full bucket is what a new client gets,
// so forgetting it loses nothing. Sweeps run when the map has doubled since the last one, so
// their cost is amortised over the requests that grew it.
func (c *clientLimiter) sweep(now time.Time) {
	for addr, cl := range c.clients {
		if cl.bucket.TokensAt(now) >= float64(c.burst) {
			delete(c.clients, addr)
		}
	}
	c.sweepAt = max(2*len(c.clients), 1024)
}

func (c *clientLimiter) tracked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.clients)
}

// limitConfigRequests answers /config/ requests over a client's limit with 503 and
// Retry-After before they reach the handler (so token guesses are limited too). 503, not 429:
// Ignition retries a config fetch on 5xx only, so a limited machine that is booting waits
// and tries again instead of failing its boot. Other paths (/healthz) are never limited.
func limitConfigRequests(next http.Handler, limit RateLimit, metrics *Metrics, log *slog.Logger) http.Handler {
	if limit.PerSecond <= 0 {
		return next
	}
	limiter := newClientLimiter(limit, time.Now)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, configPathPrefix) {
			next.ServeHTTP(w, r)
			return
		}
		addr := clientAddress(r.RemoteAddr)
		refused := limiter.allow(addr)
		if refused == nil {
			next.ServeHTTP(w, r)
			return
		}
		metrics.rateLimited.Inc()
		if refused.log {
			log.Warn("rate limited config requests (further refusals of this client are not logged for a minute)",
				"audit", true, "client", addr, "path", r.URL.Path, "userAgent", r.UserAgent(), "retryAfter", refused.retryAfter.String())
		}
		w.Header()["Retry-After"] = []string{strconv.Itoa(int(math.Ceil(refused.retryAfter.Seconds())))}
		emptyResponse(w, http.StatusServiceUnavailable)
	})
}

// clientAddress is the host part of a remote address; ports change with every connection.
func clientAddress(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote
	}
	return host
}
