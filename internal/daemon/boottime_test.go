package daemon

import "testing"

func TestParseBootTime(t *testing.T) {
	stat := "cpu  10 0 20 300 0 0 0 0 0 0\nintr 1 2 3\nctxt 42\nbtime 1763880000\nprocesses 99\n"
	if got, err := parseBootTime([]byte(stat)); err != nil || got != 1763880000 {
		t.Errorf("parseBootTime = %v, %v; want 1763880000", got, err)
	}
	for _, bad := range []string{"cpu 1 2 3\n", "btime soon\n", "btime 0\n"} {
		if got, err := parseBootTime([]byte(bad)); err == nil {
			t.Errorf("parseBootTime(%q) = %v, want an error", bad, got)
		}
	}
	// The machine running the test has booted.
	if got, err := bootTime(); err != nil || got <= 0 {
		t.Errorf("bootTime() = %v, %v", got, err)
	}
}
