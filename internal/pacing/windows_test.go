package pacing

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func dur(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

func mustWindows(t *testing.T, in ...rolloutv1.MaintenanceWindow) Windows {
	t.Helper()
	ws, errs := compileWindows(in, nil)
	if err := errs.ToAggregate(); err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestCompileWindowsNamesTheField(t *testing.T) {
	ok := rolloutv1.MaintenanceWindow{Days: []rolloutv1.Weekday{"Sat"}, Start: "02:00", Duration: dur(time.Hour)}
	cases := []struct {
		name string
		edit func(*rolloutv1.MaintenanceWindow)
		want []string
	}{
		{"bad day", func(w *rolloutv1.MaintenanceWindow) { w.Days = []rolloutv1.Weekday{"Sat", "Mox"} }, []string{`spec.maintenanceWindows[1].days[1]`, `"Mox"`, "Mon"}},
		{"hour out of range", func(w *rolloutv1.MaintenanceWindow) { w.Start = "25:00" }, []string{`spec.maintenanceWindows[1].start`, `"25:00"`, "HH:MM"}},
		{"not HH:MM", func(w *rolloutv1.MaintenanceWindow) { w.Start = "2:00" }, []string{`spec.maintenanceWindows[1].start`, `"2:00"`}},
		{"bad end", func(w *rolloutv1.MaintenanceWindow) { w.Duration, w.End = nil, "24:00" }, []string{`spec.maintenanceWindows[1].end`, `"24:00"`}},
		{"unknown zone", func(w *rolloutv1.MaintenanceWindow) { w.TimeZone = "Mars/Olympus" }, []string{`spec.maintenanceWindows[1].timeZone`, `"Mars/Olympus"`, "IANA"}},
		{"zero duration", func(w *rolloutv1.MaintenanceWindow) { w.Duration = dur(0) }, []string{`spec.maintenanceWindows[1].duration`, "more than 0"}},
		{"too long", func(w *rolloutv1.MaintenanceWindow) { w.Duration = dur(25 * time.Hour) }, []string{`spec.maintenanceWindows[1].duration`, "at most 24h"}},
		{"end equals start", func(w *rolloutv1.MaintenanceWindow) { w.Duration, w.End = nil, "02:00" }, []string{`spec.maintenanceWindows[1].end`, "empty"}},
		{"neither", func(w *rolloutv1.MaintenanceWindow) { w.Duration = nil }, []string{`spec.maintenanceWindows[1].duration`, "Required"}},
		{"both", func(w *rolloutv1.MaintenanceWindow) { w.End = "04:00" }, []string{`spec.maintenanceWindows[1].end`, "not both"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := ok
			c.edit(&bad)
			_, err := Compile(rolloutv1.MachineConfigPoolRolloutSpec{
				PoolSelector:       &metav1.LabelSelector{},
				MaintenanceWindows: []rolloutv1.MaintenanceWindow{ok, bad},
			})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "maintenanceWindows[0]") {
				t.Errorf("error blames the valid window: %v", err)
			}
		})
	}
}

// OpenUntil is the window check Decide makes when a policy has windows (none: always open).
func TestOpenUntil(t *testing.T) {
	berlinSat := rolloutv1.MaintenanceWindow{Days: []rolloutv1.Weekday{"Sat"}, Start: "02:00", Duration: dur(4 * time.Hour), TimeZone: "Europe/Berlin"}
	friNight := rolloutv1.MaintenanceWindow{Days: []rolloutv1.Weekday{"Fri"}, Start: "22:00", End: "02:00"}
	tueMorning := rolloutv1.MaintenanceWindow{Days: []rolloutv1.Weekday{"Tue"}, Start: "10:00", Duration: dur(time.Hour)}
	// 2026-03-29 and 2026-10-25 are the Sundays Europe/Berlin moves to CEST and back.
	springEnd := rolloutv1.MaintenanceWindow{Days: []rolloutv1.Weekday{"Sun"}, Start: "01:00", End: "05:00", TimeZone: "Europe/Berlin"}
	springDur := rolloutv1.MaintenanceWindow{Days: []rolloutv1.Weekday{"Sun"}, Start: "01:00", Duration: dur(4 * time.Hour), TimeZone: "Europe/Berlin"}
	cases := []struct {
		name    string
		windows []rolloutv1.MaintenanceWindow
		at      string
		want    bool
		until   string
	}{
		{"before start (summer, CEST)", []rolloutv1.MaintenanceWindow{berlinSat}, "2026-06-12T23:59:00Z", false, ""},
		{"at start", []rolloutv1.MaintenanceWindow{berlinSat}, "2026-06-13T00:00:00Z", true, "2026-06-13T04:00:00Z"},
		{"last minute", []rolloutv1.MaintenanceWindow{berlinSat}, "2026-06-13T03:59:00Z", true, "2026-06-13T04:00:00Z"},
		{"at end", []rolloutv1.MaintenanceWindow{berlinSat}, "2026-06-13T04:00:00Z", false, ""},
		{"winter: CET shifts the window", []rolloutv1.MaintenanceWindow{berlinSat}, "2026-01-10T01:00:00Z", true, "2026-01-10T05:00:00Z"},
		{"other day", []rolloutv1.MaintenanceWindow{berlinSat}, "2026-06-14T01:00:00Z", false, ""},
		{"crossing midnight: Friday side", []rolloutv1.MaintenanceWindow{friNight}, "2026-06-12T23:00:00Z", true, "2026-06-13T02:00:00Z"},
		{"crossing midnight: Saturday side", []rolloutv1.MaintenanceWindow{friNight}, "2026-06-13T01:59:00Z", true, "2026-06-13T02:00:00Z"},
		{"crossing midnight: closed", []rolloutv1.MaintenanceWindow{friNight}, "2026-06-13T02:00:00Z", false, ""},
		{"crossing midnight: Thursday night is not Friday", []rolloutv1.MaintenanceWindow{friNight}, "2026-06-11T23:00:00Z", false, ""},
		{"several windows: second", []rolloutv1.MaintenanceWindow{friNight, tueMorning}, "2026-06-09T10:30:00Z", true, "2026-06-09T11:00:00Z"},
		{"several windows: none", []rolloutv1.MaintenanceWindow{friNight, tueMorning}, "2026-06-09T11:30:00Z", false, ""},
		// 01:00 CET is 00:00Z; 05:00 CEST is 03:00Z: a wall-clock end makes it 3h that night.
		{"spring forward, wall-clock end: open", []rolloutv1.MaintenanceWindow{springEnd}, "2026-03-29T02:59:00Z", true, "2026-03-29T03:00:00Z"},
		{"spring forward, wall-clock end: closed at 05:00 CEST", []rolloutv1.MaintenanceWindow{springEnd}, "2026-03-29T03:00:00Z", false, ""},
		{"spring forward, duration stays 4h elapsed", []rolloutv1.MaintenanceWindow{springDur}, "2026-03-29T03:30:00Z", true, "2026-03-29T04:00:00Z"},
		// 01:00 CEST is 23:00Z Saturday; 05:00 CET is 04:00Z: 5h that night.
		{"fall back, wall-clock end: opens Saturday 23:00Z", []rolloutv1.MaintenanceWindow{springEnd}, "2026-10-24T23:00:00Z", true, "2026-10-25T04:00:00Z"},
		{"fall back, wall-clock end: open in the extra hour", []rolloutv1.MaintenanceWindow{springEnd}, "2026-10-25T03:30:00Z", true, "2026-10-25T04:00:00Z"},
		{"fall back, duration: closed after 4h elapsed", []rolloutv1.MaintenanceWindow{springDur}, "2026-10-25T03:30:00Z", false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := mustWindows(t, c.windows...)
			now := at(t, c.at)
			until, open := ws.OpenUntil(now)
			if open != c.want {
				t.Fatalf("open = %v, want %v", open, c.want)
			}
			if c.until == "" {
				if open {
					t.Fatalf("OpenUntil = %v, want closed", until)
				}
				return
			}
			if !until.Equal(at(t, c.until)) {
				t.Fatalf("OpenUntil = %v, want %s", until.UTC(), c.until)
			}
		})
	}
}

func TestNextWindowStart(t *testing.T) {
	daily2 := rolloutv1.MaintenanceWindow{Start: "02:00", Duration: dur(time.Hour), TimeZone: "Europe/Berlin"}
	nyDaily := rolloutv1.MaintenanceWindow{Start: "01:00", Duration: dur(time.Hour), TimeZone: "America/New_York"}
	berlinSat := rolloutv1.MaintenanceWindow{Days: []rolloutv1.Weekday{"Sat"}, Start: "02:00", Duration: dur(4 * time.Hour), TimeZone: "Europe/Berlin"}
	cases := []struct {
		name    string
		windows []rolloutv1.MaintenanceWindow
		from    string
		want    string
		desc    string
	}{
		{"this week", []rolloutv1.MaintenanceWindow{berlinSat}, "2026-06-12T20:48:00Z", "2026-06-13T00:00:00Z", "Sat 02:00 Europe/Berlin"},
		{"inside one: the next, a week on", []rolloutv1.MaintenanceWindow{berlinSat}, "2026-06-13T01:00:00Z", "2026-06-20T00:00:00Z", "Sat 02:00 Europe/Berlin"},
		{"earliest of several zones", []rolloutv1.MaintenanceWindow{berlinSat, nyDaily}, "2026-06-12T12:00:00Z", "2026-06-13T00:00:00Z", "Sat 02:00 Europe/Berlin"},
		{"earliest of several zones, other", []rolloutv1.MaintenanceWindow{berlinSat, nyDaily}, "2026-06-13T01:00:00Z", "2026-06-13T05:00:00Z", "Sat 01:00 America/New_York"},
		// 02:00 does not exist in Berlin on 2026-03-29; Go resolves it to 03:00 CEST (01:00Z).
		{"start skipped by spring forward", []rolloutv1.MaintenanceWindow{daily2}, "2026-03-28T12:00:00Z", "2026-03-29T01:00:00Z", "Sun 03:00 Europe/Berlin"},
		{"day after spring forward is CEST", []rolloutv1.MaintenanceWindow{daily2}, "2026-03-29T12:00:00Z", "2026-03-30T00:00:00Z", "Mon 02:00 Europe/Berlin"},
		{"day before spring forward is CET", []rolloutv1.MaintenanceWindow{daily2}, "2026-03-27T12:00:00Z", "2026-03-28T01:00:00Z", "Sat 02:00 Europe/Berlin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, w, ok := NextWindowStart(mustWindows(t, c.windows...), at(t, c.from))
			if !ok || !got.Equal(at(t, c.want)) {
				t.Fatalf("NextWindowStart = %v %v, want %s", got.UTC(), ok, c.want)
			}
			if d := w.Describe(got); d != c.desc {
				t.Fatalf("Describe = %q, want %q", d, c.desc)
			}
		})
	}
	if _, _, ok := NextWindowStart(nil, time.Now()); ok {
		t.Fatal("no windows gave a next start")
	}
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0m", 30 * time.Second: "1m", 12 * time.Minute: "12m", 3*time.Hour + 12*time.Minute: "3h12m",
		3*time.Hour + 11*time.Minute + 1*time.Second: "3h12m", 2 * time.Hour: "2h0m", 49*time.Hour + 5*time.Minute: "2d1h5m",
	} {
		if got := HumanDuration(d); got != want {
			t.Errorf("HumanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
