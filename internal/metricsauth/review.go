package metricsauth

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authnclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
)

// How long a decision is remembered: a scraper every 30 s then costs the API server two
// reviews a minute at most, and a revoked right stops working within allowedFor. A refusal is
// kept briefly, so a token just granted the right is not turned away for long.
const (
	allowedFor  = time.Minute
	refusedFor  = 10 * time.Second
	cacheLimit  = 1024 // decisions kept; past it expired ones are dropped, then all
	reviewLimit = 10 * time.Second
	// reviewRate and reviewBurst bound how many tokens the endpoint asks the API server about
	// (a TokenReview, then a SubjectAccessReview each): anyone who reaches the port could
	// otherwise make it ask once per made-up token, as fast as they send them. A scraper's
	// token, decided once a minute, never meets the bound; past it a request that needs a
	// review gets 429 and Retry-After, and the next scrape tries again.
	reviewRate  = rate.Limit(5)
	reviewBurst = 20
)

// Reviewer lets a request through when its bearer token is one the API server accepts
// (TokenReview) for a user allowed the request's verb on its path (SubjectAccessReview on the
// non-resource URL, e.g. get /metrics).
type Reviewer struct {
	Tokens authnclient.TokenReviewInterface
	Access authzclient.SubjectAccessReviewInterface

	mu        sync.Mutex
	decisions map[decisionKey]decision
	limiter   *rate.Limiter
	now       func() time.Time
}

// errTooManyReviews is decide's answer past reviewRate.
var errTooManyReviews = errors.New("too many tokens to review")

// NewReviewer asks the API server cfg points at.
func NewReviewer(cfg *rest.Config) (*Reviewer, error) {
	authn, err := authnclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	authz, err := authzclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Reviewer{Tokens: authn.TokenReviews(), Access: authz.SubjectAccessReviews()}, nil
}

type decisionKey struct {
	token      [sha256.Size]byte // never the token itself
	verb, path string
}

type decision struct {
	status  int // http.StatusOK, StatusUnauthorized or StatusForbidden
	expires time.Time
}

// Protect answers 401 without a token the API server accepts, 403 for a user without the
// right, 500 when the API server cannot be asked, and otherwise passes on to next.
func (r *Reviewer) Protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		token, ok := bearer(req)
		if !ok {
			http.Error(w, "Unauthorized: a bearer token is required", http.StatusUnauthorized)
			return
		}
		status, err := r.decide(req.Context(), token, verbOf(req.Method), req.URL.Path)
		switch {
		case errors.Is(err, errTooManyReviews):
			w.Header().Set("Retry-After", "1")
			http.Error(w, "Too Many Requests: too many tokens to review; try again", http.StatusTooManyRequests)
		case err != nil:
			http.Error(w, "Internal Server Error: could not review the token: "+err.Error(), http.StatusInternalServerError)
		case status == http.StatusUnauthorized:
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
		case status == http.StatusForbidden:
			http.Error(w, "Forbidden: the token's user may not "+verbOf(req.Method)+" "+req.URL.Path, http.StatusForbidden)
		default:
			next.ServeHTTP(w, req)
		}
	})
}

func bearer(req *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "Bearer") && token != ""
}

// verbOf is the API server's verb for a request to a non-resource URL.
func verbOf(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	}
	return strings.ToLower(method)
}

func (r *Reviewer) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

func (r *Reviewer) decide(ctx context.Context, token, verb, path string) (int, error) {
	key := decisionKey{token: sha256.Sum256([]byte(token)), verb: verb, path: path}
	now := r.clock()
	r.mu.Lock()
	d, ok := r.decisions[key]
	r.mu.Unlock()
	if ok && now.Before(d.expires) {
		return d.status, nil
	}
	if !r.allowReview(now) {
		return 0, errTooManyReviews
	}
	ctx, cancel := context.WithTimeout(ctx, reviewLimit)
	defer cancel()
	status, err := r.review(ctx, token, verb, path)
	if err != nil {
		return 0, err
	}
	ttl := refusedFor
	if status == http.StatusOK {
		ttl = allowedFor
	}
	r.remember(key, decision{status: status, expires: now.Add(ttl)}, now)
	return status, nil
}

func (r *Reviewer) review(ctx context.Context, token, verb, path string) (int, error) {
	tr, err := r.Tokens.Create(ctx, &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	if !tr.Status.Authenticated {
		return http.StatusUnauthorized, nil
	}
	u := tr.Status.User
	extra := map[string]authzv1.ExtraValue{}
	for k, v := range u.Extra {
		extra[k] = authzv1.ExtraValue(v)
	}
	sar, err := r.Access.Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
		NonResourceAttributes: &authzv1.NonResourceAttributes{Path: path, Verb: verb},
	}}, metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	if !sar.Status.Allowed || sar.Status.Denied {
		return http.StatusForbidden, nil
	}
	return http.StatusOK, nil
}

// allowReview takes one review from the rate limit.
func (r *Reviewer) allowReview(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.limiter == nil {
		r.limiter = rate.NewLimiter(reviewRate, reviewBurst)
	}
	return r.limiter.AllowN(now, 1)
}

// remember keeps d, bounding the cache: random tokens must not grow it without end.
func (r *Reviewer) remember(key decisionKey, d decision, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.decisions == nil {
		r.decisions = map[decisionKey]decision{}
	}
	if len(r.decisions) >= cacheLimit {
		for k, old := range r.decisions {
			if !now.Before(old.expires) {
				delete(r.decisions, k)
			}
		}
		if len(r.decisions) >= cacheLimit {
			clear(r.decisions)
		}
	}
	r.decisions[key] = d
}
