package servertoken

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/protocol"
)

func TestPlan(t *testing.T) {
	policy := Policy{Lifetime: 30 * 24 * time.Hour, Overlap: 24 * time.Hour}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	rotateAfter := 29 * day
	tests := []struct {
		name        string
		cur         State
		want        State
		wantChanges []string // substrings, in order
		requeue     time.Duration
	}{
		{
			name:        "new Secret gets a token",
			cur:         State{},
			want:        State{Token: "fresh-1", IssuedAt: now},
			wantChanges: []string{"issued"},
			requeue:     rotateAfter,
		},
		{
			name:    "young token: nothing to do, look again at its rotation",
			cur:     State{Token: "a", IssuedAt: now.Add(-10 * day)},
			want:    State{Token: "a", IssuedAt: now.Add(-10 * day)},
			requeue: 19 * day,
		},
		{
			name:    "one second before rotation",
			cur:     State{Token: "a", IssuedAt: now.Add(-rotateAfter + time.Second)},
			want:    State{Token: "a", IssuedAt: now.Add(-rotateAfter + time.Second)},
			requeue: time.Second,
		},
		{
			name:        "rotation due: current becomes previous with an explicit expiry",
			cur:         State{Token: "a", IssuedAt: now.Add(-rotateAfter)},
			want:        State{Token: "fresh-1", IssuedAt: now, PreviousToken: "a", PreviousExpires: now.Add(day)},
			wantChanges: []string{"rotated"},
			requeue:     day,
		},
		{
			name:        "rotation long overdue (controller was down): the overlap counts from now",
			cur:         State{Token: "a", IssuedAt: now.Add(-90 * day)},
			want:        State{Token: "fresh-1", IssuedAt: now, PreviousToken: "a", PreviousExpires: now.Add(day)},
			wantChanges: []string{"rotated"},
			requeue:     day,
		},
		{
			name:        "rotation replaces a still valid previous token",
			cur:         State{Token: "b", IssuedAt: now.Add(-rotateAfter), PreviousToken: "a", PreviousExpires: now.Add(time.Hour)},
			want:        State{Token: "fresh-1", IssuedAt: now, PreviousToken: "b", PreviousExpires: now.Add(day)},
			wantChanges: []string{"rotated"},
			requeue:     day,
		},
		{
			name:    "previous token in its overlap: look again at its expiry",
			cur:     State{Token: "b", IssuedAt: now.Add(-time.Hour), PreviousToken: "a", PreviousExpires: now.Add(23 * time.Hour)},
			want:    State{Token: "b", IssuedAt: now.Add(-time.Hour), PreviousToken: "a", PreviousExpires: now.Add(23 * time.Hour)},
			requeue: 23 * time.Hour,
		},
		{
			name:        "expired previous token is dropped",
			cur:         State{Token: "b", IssuedAt: now.Add(-day), PreviousToken: "a", PreviousExpires: now},
			want:        State{Token: "b", IssuedAt: now.Add(-day)},
			wantChanges: []string{"dropped"},
			requeue:     28 * day,
		},
		{
			name:        "previous token without a readable expiry gets one overlap from now",
			cur:         State{Token: "b", IssuedAt: now.Add(-day), PreviousToken: "a"},
			want:        State{Token: "b", IssuedAt: now.Add(-day), PreviousToken: "a", PreviousExpires: now.Add(day)},
			wantChanges: []string{"limited"},
			requeue:     day,
		},
		{
			name:        "previous token expiring beyond the overlap (overlap shortened) is limited",
			cur:         State{Token: "b", IssuedAt: now.Add(-day), PreviousToken: "a", PreviousExpires: now.Add(7 * day)},
			want:        State{Token: "b", IssuedAt: now.Add(-day), PreviousToken: "a", PreviousExpires: now.Add(day)},
			wantChanges: []string{"limited"},
			requeue:     day,
		},
		{
			name:    "an expiry without a previous token is dropped",
			cur:     State{Token: "b", IssuedAt: now.Add(-day), PreviousExpires: now.Add(time.Hour)},
			want:    State{Token: "b", IssuedAt: now.Add(-day)},
			requeue: 28 * day,
		},
		{
			name:        "unknown issue time counts from now, no rotation",
			cur:         State{Token: "a"},
			want:        State{Token: "a", IssuedAt: now},
			wantChanges: []string{"issue time"},
			requeue:     rotateAfter,
		},
		{
			name:        "issue time in the future counts from now",
			cur:         State{Token: "a", IssuedAt: now.Add(365 * day)},
			want:        State{Token: "a", IssuedAt: now},
			wantChanges: []string{"issue time"},
			requeue:     rotateAfter,
		},
		{
			name:        "emptied token is reissued, the valid previous one kept",
			cur:         State{IssuedAt: now.Add(-day), PreviousToken: "a", PreviousExpires: now.Add(time.Hour)},
			want:        State{Token: "fresh-1", IssuedAt: now, PreviousToken: "a", PreviousExpires: now.Add(time.Hour)},
			wantChanges: []string{"issued"},
			requeue:     time.Hour,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			newToken := func() string { n++; return "fresh-" + string(rune('0'+n)) }
			got := Plan(tc.cur, now.Add(400*time.Millisecond), policy, newToken)
			if !sameState(got.Desired, tc.want) {
				t.Errorf("desired = %+v\nwant      %+v", got.Desired, tc.want)
			}
			if len(got.Changes) != len(tc.wantChanges) {
				t.Fatalf("changes = %q, want %q", got.Changes, tc.wantChanges)
			}
			for i, sub := range tc.wantChanges {
				if !strings.Contains(got.Changes[i], sub) {
					t.Errorf("change %d = %q, want it to say %q", i, got.Changes[i], sub)
				}
			}
			if got.RequeueAfter != tc.requeue {
				t.Errorf("requeue after %s, want %s", got.RequeueAfter, tc.requeue)
			}
			// What the controller writes, read back, plans nothing more at the same time.
			back := FromSecret(got.Desired.Data(), map[string]string{protocol.ServerTokenIssuedAtAnnotation: got.Desired.IssuedAtAnnotation()})
			if again := Plan(back, now, policy, newToken); len(again.Changes) != 0 || !maps.EqualFunc(again.Desired.Data(), got.Desired.Data(), slices.Equal) {
				t.Errorf("the written state plans again: %q", again.Changes)
			}
		})
	}
}

func sameState(a, b State) bool {
	return a.Token == b.Token && a.IssuedAt.Equal(b.IssuedAt) && a.PreviousToken == b.PreviousToken && a.PreviousExpires.Equal(b.PreviousExpires)
}

func TestFromSecretAndData(t *testing.T) {
	data := map[string][]byte{
		protocol.ServerTokenKey:          []byte(" tok\n"),
		protocol.PreviousTokenKey:        []byte("old"),
		protocol.PreviousTokenExpiresKey: []byte("2026-03-02T12:00:00Z"),
	}
	s := FromSecret(data, map[string]string{protocol.ServerTokenIssuedAtAnnotation: "2026-03-01T12:00:00Z"})
	if s.Token != "tok" || s.PreviousToken != "old" || s.IssuedAt.IsZero() || s.PreviousExpires.Sub(s.IssuedAt) != 24*time.Hour {
		t.Fatalf("read %+v", s)
	}
	if got := string(s.Data()[protocol.PreviousTokenExpiresKey]); got != "2026-03-02T12:00:00Z" {
		t.Errorf("expiry written as %q", got)
	}
	bad := FromSecret(map[string][]byte{protocol.PreviousTokenExpiresKey: []byte("tomorrow")}, map[string]string{protocol.ServerTokenIssuedAtAnnotation: "yesterday"})
	if !bad.IssuedAt.IsZero() || !bad.PreviousExpires.IsZero() {
		t.Errorf("unparseable times read as %+v", bad)
	}
	if _, ok := (State{Token: "t"}).Data()[protocol.PreviousTokenExpiresKey]; ok {
		t.Error("an expiry is written without a previous token")
	}
}

func TestPolicyValidate(t *testing.T) {
	for _, tc := range []struct {
		p  Policy
		ok bool
	}{
		{Policy{Lifetime: DefaultLifetime, Overlap: DefaultOverlap}, true},
		{Policy{Lifetime: time.Hour, Overlap: time.Hour}, false},
		{Policy{Lifetime: time.Hour, Overlap: 2 * time.Hour}, false},
		{Policy{Lifetime: time.Hour, Overlap: 0}, false},
	} {
		if err := tc.p.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.p, err)
		}
	}
}

func TestNewToken(t *testing.T) {
	a, b := NewToken(), NewToken()
	if len(a) != 64 || a == b || strings.Trim(a, "0123456789abcdef") != "" {
		t.Fatalf("tokens %q %q: want two different 64-digit hex strings (256 bits)", a, b)
	}
}
