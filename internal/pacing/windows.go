package pacing

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
)

// maxWindow bounds a window's length so a window can only reach into the next day; a longer
// one would be better written as several days.
const maxWindow = 24 * time.Hour

var weekdays = map[rolloutv1.Weekday]time.Weekday{
	"Sun": time.Sunday, "Mon": time.Monday, "Tue": time.Tuesday, "Wed": time.Wednesday,
	"Thu": time.Thursday, "Fri": time.Friday, "Sat": time.Saturday,
}

// Window is a validated maintenance window.
type Window struct {
	days     [7]bool
	start    int // minutes after local midnight
	length   time.Duration
	end      int  // minutes after local midnight, when endWall
	endWall  bool // the window ends at a wall-clock time rather than after length
	location *time.Location
}

// Windows are a policy's maintenance windows; none means always open.
type Windows []Window

// compileWindows validates the API's windows; errors name the field (maintenanceWindows[1].start).
func compileWindows(in []rolloutv1.MaintenanceWindow, path *field.Path) (Windows, field.ErrorList) {
	var errs field.ErrorList
	out := make(Windows, 0, len(in))
	for i, w := range in {
		p := path.Index(i)
		c := Window{location: time.UTC}
		if len(w.Days) == 0 {
			c.days = [7]bool{true, true, true, true, true, true, true}
		}
		for j, d := range w.Days {
			wd, ok := weekdays[d]
			if !ok {
				errs = append(errs, field.NotSupported(p.Child("days").Index(j), d, []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}))
				continue
			}
			c.days[wd] = true
		}
		start, err := clock(w.Start)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("start"), w.Start, err.Error()))
		}
		c.start = start
		if w.TimeZone != "" {
			loc, err := time.LoadLocation(w.TimeZone)
			if err != nil {
				errs = append(errs, field.Invalid(p.Child("timeZone"), w.TimeZone, "not a known IANA time zone"))
			} else {
				c.location = loc
			}
		}
		switch {
		case w.Duration != nil && w.End != "":
			errs = append(errs, field.Invalid(p.Child("end"), w.End, "set either duration or end, not both"))
		case w.Duration != nil:
			if d := w.Duration.Duration; d <= 0 || d > maxWindow {
				errs = append(errs, field.Invalid(p.Child("duration"), d.String(), "must be more than 0 and at most 24h"))
			}
			c.length = w.Duration.Duration
		case w.End != "":
			end, err := clock(w.End)
			switch {
			case err != nil:
				errs = append(errs, field.Invalid(p.Child("end"), w.End, err.Error()))
			case end == start:
				errs = append(errs, field.Invalid(p.Child("end"), w.End, "equals start: the window would be empty"))
			}
			c.end, c.endWall = end, true
		default:
			errs = append(errs, field.Required(p.Child("duration"), "set duration or end"))
		}
		out = append(out, c)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

func clock(s string) (int, error) {
	var h, m int
	if len(s) != 5 || s[2] != ':' {
		return 0, fmt.Errorf("must be HH:MM, 00:00 to 23:59")
	}
	if _, err := fmt.Sscanf(s, "%2d:%2d", &h, &m); err != nil || h < 0 || h > 23 || m < 0 || m > 59 {
		return 0, fmt.Errorf("must be HH:MM, 00:00 to 23:59")
	}
	return h*60 + m, nil
}

// occurrence is the window opening on the local day `offset` days from t's local day, if
// the window opens that day. Wall times that do not exist (skipped by a DST change) resolve
// as Go's time.Date does: to the same instant an hour later on the wall clock.
func (w Window) occurrence(t time.Time, offset int) (start, end time.Time, ok bool) {
	y, m, d := t.In(w.location).Date()
	d += offset
	if !w.days[time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Weekday()] {
		return time.Time{}, time.Time{}, false
	}
	start = time.Date(y, m, d, w.start/60, w.start%60, 0, 0, w.location)
	if !w.endWall {
		return start, start.Add(w.length), true
	}
	endDay := d
	if w.end <= w.start {
		endDay++
	}
	return start, time.Date(y, m, endDay, w.end/60, w.end%60, 0, 0, w.location), true
}

// OpenUntil reports whether a window is open at t and, if so, when the last of the open ones
// closes.
func (ws Windows) OpenUntil(t time.Time) (time.Time, bool) {
	var until time.Time
	for _, w := range ws {
		// A window that opened up to two local days ago may still be open (≤24h long, plus a DST hour).
		for offset := -2; offset <= 0; offset++ {
			start, end, ok := w.occurrence(t, offset)
			if ok && !t.Before(start) && t.Before(end) && end.After(until) {
				until = end
			}
		}
	}
	return until, !until.IsZero()
}

// NextWindowStart is the first window opening strictly after t, with the window it belongs
// to; false when there are no windows.
func NextWindowStart(ws Windows, t time.Time) (time.Time, Window, bool) {
	var next time.Time
	var which Window
	for _, w := range ws {
		for offset := -1; offset <= 8; offset++ {
			start, _, ok := w.occurrence(t, offset)
			if ok && start.After(t) && (next.IsZero() || start.Before(next)) {
				next, which = start, w
			}
		}
	}
	return next, which, !next.IsZero()
}

// Describe names a window opening as a reader in its zone would: "Sat 02:00 Europe/Berlin".
func (w Window) Describe(start time.Time) string {
	return start.In(w.location).Format("Mon 15:04 ") + w.location.String()
}

// HumanDuration renders a wait rounded up to the minute (reasons, mco rollout status): "3h12m", "12m", "2d1h0m".
func HumanDuration(d time.Duration) string {
	if d <= 0 {
		return "0m"
	}
	mins := int((d + time.Minute - 1) / time.Minute)
	days, hours, mins := mins/(24*60), mins/60%24, mins%60
	switch {
	case days > 0:
		return fmt.Sprintf("%dd%dh%dm", days, hours, mins)
	case hours > 0:
		return fmt.Sprintf("%dh%dm", hours, mins)
	default:
		return fmt.Sprintf("%dm", mins)
	}
}
