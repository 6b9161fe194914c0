package metricsauth

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/time/rate"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// fakeAPIServer knows token "reader" (may get /metrics) and "other" (may not), and counts
// the reviews it was asked for.
func fakeAPIServer(reviews *int) *Reviewer {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		*reviews++
		tr := a.(k8stesting.CreateAction).GetObject().(*authnv1.TokenReview)
		switch tr.Spec.Token {
		case "reader", "other":
			tr.Status = authnv1.TokenReviewStatus{Authenticated: true, User: authnv1.UserInfo{Username: tr.Spec.Token}}
		}
		return true, tr, nil
	})
	cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		*reviews++
		sar := a.(k8stesting.CreateAction).GetObject().(*authzv1.SubjectAccessReview)
		nr := sar.Spec.NonResourceAttributes
		sar.Status.Allowed = sar.Spec.User == "reader" && nr != nil && nr.Path == "/metrics" && nr.Verb == "get"
		return true, sar, nil
	})
	return &Reviewer{Tokens: cs.AuthenticationV1().TokenReviews(), Access: cs.AuthorizationV1().SubjectAccessReviews()}
}

func TestProtect(t *testing.T) {
	var reviews int
	r := fakeAPIServer(&reviews)
	now := time.Unix(1e9, 0)
	r.now = func() time.Time { return now }
	h := r.Protect(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) }))
	get := func(auth, path string) int {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for _, c := range []struct {
		auth, path string
		want       int
	}{
		{"", "/metrics", http.StatusUnauthorized},
		{"Basic cmVhZGVy", "/metrics", http.StatusUnauthorized},
		{"Bearer ", "/metrics", http.StatusUnauthorized},
		{"Bearer unknown", "/metrics", http.StatusUnauthorized},
		{"Bearer other", "/metrics", http.StatusForbidden},
		{"Bearer reader", "/other", http.StatusForbidden},
		{"Bearer reader", "/metrics", http.StatusOK},
		{"bearer reader", "/metrics", http.StatusOK},
	} {
		if got := get(c.auth, c.path); got != c.want {
			t.Errorf("%q %s: %d, want %d", c.auth, c.path, got, c.want)
		}
	}

	// Decisions are remembered for a while, a refusal shorter than a grant.
	reviews = 0
	get("Bearer reader", "/metrics")
	get("Bearer other", "/metrics")
	if reviews != 0 {
		t.Errorf("%d reviews for decisions just made", reviews)
	}
	now = now.Add(refusedFor)
	get("Bearer reader", "/metrics")
	get("Bearer other", "/metrics")
	if reviews != 2 { // other's TokenReview and SubjectAccessReview again
		t.Errorf("%d reviews after the refusal expired, want 2", reviews)
	}
	now = now.Add(allowedFor)
	reviews = 0
	get("Bearer reader", "/metrics")
	if reviews != 2 {
		t.Errorf("%d reviews after the grant expired, want 2", reviews)
	}
}

func TestCacheIsBounded(t *testing.T) {
	var reviews int
	r := fakeAPIServer(&reviews)
	r.limiter = rate.NewLimiter(rate.Inf, 0) // the cache's bound, not the review rate's
	for i := range cacheLimit + 10 {
		_, _ = r.decide(t.Context(), string(rune('a'+i%26))+string(rune(i)), "get", "/metrics")
	}
	if reviews != cacheLimit+10 {
		t.Fatalf("%d reviews for %d tokens: the test did not fill the cache", reviews, cacheLimit+10)
	}
	if len(r.decisions) > cacheLimit {
		t.Errorf("%d decisions kept, limit %d", len(r.decisions), cacheLimit)
	}
}

// TestReviewsAreRateLimited: made-up tokens sent as fast as possible cost the API server at most
// the burst of reviews, then 429 with Retry-After; a token decided before is still answered from
// the cache, and reviews resume as the limit refills.
func TestReviewsAreRateLimited(t *testing.T) {
	var reviews int
	r := fakeAPIServer(&reviews)
	now := time.Unix(1e9, 0)
	r.now = func() time.Time { return now }
	h := r.Protect(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) }))
	get := func(token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if code := get("reader").Code; code != http.StatusOK {
		t.Fatalf("the scraper's token: %d", code)
	}
	reviews = 0
	limited := 0
	for i := range 200 {
		rec := get(fmt.Sprintf("made-up-%d", i))
		if rec.Code == http.StatusTooManyRequests {
			limited++
			if rec.Header().Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
		}
	}
	if reviews > reviewBurst || limited != 200-(reviewBurst-1) {
		t.Errorf("200 made-up tokens at once: %d reviews asked, %d answered 429; want at most %d reviews", reviews, limited, reviewBurst)
	}
	if code := get("reader").Code; code != http.StatusOK {
		t.Errorf("the scraper's token while the limit is spent: %d, want 200 from the cache", code)
	}
	now = now.Add(time.Second)
	if code := get("other").Code; code != http.StatusForbidden {
		t.Errorf("a new token a second later: %d, want 403 after its review", code)
	}
}
