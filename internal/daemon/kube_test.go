package daemon

import "testing"

func TestNewerResourceVersion(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"101", "100", true}, {"100", "101", false}, {"100", "100", false}, {"x", "1", false}, {"9", "10", false},
	} {
		if got := newerResourceVersion(tc.a, tc.b); got != tc.want {
			t.Errorf("newerResourceVersion(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}
