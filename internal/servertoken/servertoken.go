// Package servertoken is the pure core of the Machine Config Server's per-pool bearer tokens:
// given what a pool's managed token Secret holds, the time and the rotation policy, it decides
// what the Secret must hold (issue a first token, rotate an old one, drop an expired previous
// one) and when to look again. Nothing here talks to an API server; the controller in
// internal/controller/servertoken reads the Secret, calls Plan and writes the result.
package servertoken

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/mco-dev/mco/internal/protocol"
)

// Defaults of `mco controller`'s --server-token-lifetime and --server-token-overlap.
const (
	DefaultLifetime = 30 * 24 * time.Hour
	DefaultOverlap  = 24 * time.Hour
)

// Policy is how long tokens live.
type Policy struct {
	// Lifetime is how long a token is accepted in all: it is the pool's current token for
	// Lifetime-Overlap, then the previous one for Overlap (longer only when a rotation comes
	// late, e.g. while the controller was down).
	Lifetime time.Duration
	// Overlap is how long a rotated-out token keeps working. Machines created from user data
	// written before a rotation still present the old token, so it must cover the time from a
	// cloud machine's creation to its first config fetch.
	Overlap time.Duration
}

// Validate refuses policies that would rotate constantly or never let an old token work.
func (p Policy) Validate() error {
	if p.Overlap <= 0 {
		return fmt.Errorf("token overlap %s: must be positive", p.Overlap)
	}
	if p.Lifetime <= p.Overlap {
		return fmt.Errorf("token lifetime %s: must be longer than the overlap %s", p.Lifetime, p.Overlap)
	}
	return nil
}

// rotateAfter is how old a current token may get.
func (p Policy) rotateAfter() time.Duration { return p.Lifetime - p.Overlap }

// State is what a token Secret holds. Zero times mean absent or unreadable.
type State struct {
	Token           string
	IssuedAt        time.Time
	PreviousToken   string
	PreviousExpires time.Time
}

// FromSecret reads a token Secret's data and annotations. A time that does not parse reads as
// zero, which Plan repairs; it never fails, since the Secret is the controller's to fix.
func FromSecret(data map[string][]byte, annotations map[string]string) State {
	return State{
		Token:           strings.TrimSpace(string(data[protocol.ServerTokenKey])),
		IssuedAt:        parseTime(annotations[protocol.ServerTokenIssuedAtAnnotation]),
		PreviousToken:   strings.TrimSpace(string(data[protocol.PreviousTokenKey])),
		PreviousExpires: parseTime(string(data[protocol.PreviousTokenExpiresKey])),
	}
}

func parseTime(raw string) time.Time {
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(raw))
	if err != nil {
		return time.Time{}
	}
	return t
}

// Data is the Secret data for s: token, and previous-token with its explicit expiry while
// there is one (the server then never guesses an overlap of its own).
func (s State) Data() map[string][]byte {
	data := map[string][]byte{protocol.ServerTokenKey: []byte(s.Token)}
	if s.PreviousToken != "" {
		data[protocol.PreviousTokenKey] = []byte(s.PreviousToken)
		data[protocol.PreviousTokenExpiresKey] = []byte(s.PreviousExpires.UTC().Format(time.RFC3339))
	}
	return data
}

// IssuedAtAnnotation is the value of protocol.ServerTokenIssuedAtAnnotation for s.
func (s State) IssuedAtAnnotation() string { return s.IssuedAt.UTC().Format(time.RFC3339) }

// Result is what Plan decided.
type Result struct {
	// Desired is what the Secret must hold; equal to the input when nothing changes.
	Desired State
	// Changes says what changed, for events and logs; empty when nothing did.
	Changes []string
	// RequeueAfter is when to look again: the next rotation, or the previous token's expiry if
	// that comes first. Always positive.
	RequeueAfter time.Duration
}

// Plan decides a managed token Secret's next state at now. newToken is called only when a
// token must be issued. Times are kept to whole seconds, as the Secret stores them, so a plan
// applied and read back plans no further change.
func Plan(cur State, now time.Time, p Policy, newToken func() string) Result {
	now = now.UTC().Truncate(time.Second)
	next := cur
	var changes []string
	switch {
	case next.Token == "":
		next.Token, next.IssuedAt = newToken(), now
		changes = append(changes, "issued a token")
	case next.IssuedAt.IsZero() || next.IssuedAt.After(now):
		// Unknown or future issue time (an edited annotation, a skewed clock): count from now
		// rather than rotate at once or never.
		next.IssuedAt = now
		changes = append(changes, "recorded the token's issue time")
	}
	if !now.Before(next.IssuedAt.Add(p.rotateAfter())) {
		next.PreviousToken, next.PreviousExpires = next.Token, now.Add(p.Overlap)
		next.Token, next.IssuedAt = newToken(), now
		changes = append(changes, fmt.Sprintf("rotated the token; the previous one works until %s", next.PreviousExpires.Format(time.RFC3339)))
	}
	switch limit := now.Add(p.Overlap); {
	case next.PreviousToken == "":
		next.PreviousExpires = time.Time{}
	case !next.PreviousExpires.IsZero() && !next.PreviousExpires.After(now):
		next.PreviousToken, next.PreviousExpires = "", time.Time{}
		changes = append(changes, "dropped the expired previous token")
	case next.PreviousExpires.IsZero() || next.PreviousExpires.After(limit):
		// No readable expiry, or one beyond what the policy allows (a shortened overlap, an
		// edit): the old token must not outlive the overlap from now.
		next.PreviousExpires = limit
		changes = append(changes, fmt.Sprintf("limited the previous token to %s", limit.Format(time.RFC3339)))
	}
	requeue := next.IssuedAt.Add(p.rotateAfter()).Sub(now)
	if next.PreviousToken != "" {
		requeue = min(requeue, next.PreviousExpires.Sub(now))
	}
	return Result{Desired: next, Changes: changes, RequeueAfter: requeue}
}

// NewToken is a random 256-bit token, hex-encoded.
func NewToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		// crypto/rand does not fail on supported platforms (Go 1.24+ panics inside instead).
		panic(err)
	}
	return hex.EncodeToString(b)
}
