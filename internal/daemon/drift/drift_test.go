package drift

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// rootWith writes n managed files (plus a masked unit) and returns the root and its set.
func rootWith(t testing.TB, n int) (*noderoot.Root, nodefiles.Set) {
	t.Helper()
	dir := t.TempDir()
	r, err := noderoot.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	var s nodefiles.Set
	for i := range n {
		p := fmt.Sprintf("/etc/bench/d%d/file-%d.conf", i%20, i)
		s.Entries = append(s.Entries, nodefiles.Entry{Path: p, Data: []byte(strings.Repeat("x", 200) + p), Perm: 0o644})
	}
	s.Entries = append(s.Entries, nodefiles.Entry{Path: "/etc/systemd/system/m.service", Link: nodefiles.DevNull})
	for _, e := range s.Entries {
		if _, err := r.MkdirAll(filepath.Dir(e.Path), noderoot.DefaultDir); err != nil {
			t.Fatal(err)
		}
		if e.Link != "" {
			err = r.Symlink(e.Path, e.Link, true)
		} else {
			err = r.WriteFile(e.Path, e.Data, noderoot.WriteOptions{Perm: e.Perm, Deferred: true})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return r, s
}

func TestCheckFindsEachKindOfDrift(t *testing.T) {
	cases := []struct {
		name, want string
		mutate     func(root string)
	}{
		{"content", "content mismatch", func(root string) {
			os.WriteFile(filepath.Join(root, "/etc/bench/d1/file-1.conf"), []byte("other"), 0o644)
		}},
		{"same size content", "content mismatch", func(root string) {
			p := filepath.Join(root, "/etc/bench/d1/file-1.conf")
			data, _ := os.ReadFile(p)
			data[0] = 'y'
			os.WriteFile(p, data, 0o644)
		}},
		{"mode", "mode mismatch", func(root string) { os.Chmod(filepath.Join(root, "/etc/bench/d1/file-1.conf"), 0o600) }},
		{"missing", "missing file", func(root string) { os.Remove(filepath.Join(root, "/etc/bench/d1/file-1.conf")) }},
		{"mask removed", "expected a symlink", func(root string) { os.Remove(filepath.Join(root, "/etc/systemd/system/m.service")) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, s := rootWith(t, 3)
			c, err := NewChecker(r, s)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Check(); err != nil {
				t.Fatalf("fresh root drifted: %v", err)
			}
			tc.mutate(r.Path())
			err = c.Check()
			var d *Error
			if !errors.As(err, &d) || !strings.Contains(d.Error(), tc.want) {
				t.Fatalf("Check() = %v, want drift %q", err, tc.want)
			}
		})
	}
}

func TestMonitorReportsDriftAndRecoveryQuickly(t *testing.T) {
	r, s := rootWith(t, 3)
	c, err := NewChecker(r, s)
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan error, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := &Monitor{Checker: c, Interval: time.Hour, Report: func(err error) { results <- err }}
	go m.Run(ctx)
	await := func(wantDrift bool) time.Duration {
		start := time.Now()
		for {
			select {
			case err := <-results:
				if (err != nil) == wantDrift {
					return time.Since(start)
				}
			case <-time.After(reportBound):
				t.Fatalf("no report (drift=%v) within %v; the periodic check is an hour away", wantDrift, reportBound)
			}
		}
	}
	await(false)
	p := filepath.Join(r.Path(), "/etc/bench/d2/file-2.conf")
	orig, _ := os.ReadFile(p)
	os.WriteFile(p, []byte("edited by hand"), 0o644)
	t.Logf("drift reported after %v", await(true))
	os.WriteFile(p, orig, 0o644)
	t.Logf("recovery reported after %v", await(false))
}

func TestMonitorReportsOnlyChanges(t *testing.T) {
	r, s := rootWith(t, 3)
	c, err := NewChecker(r, s)
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan error, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := &Monitor{Checker: c, Interval: 5 * time.Millisecond, Report: func(err error) { results <- err }}
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }() // checks run every 5 ms: stop them before the root closes
	if err := <-results; err != nil {
		t.Fatalf("first report: %v", err)
	}
	time.Sleep(100 * time.Millisecond) // about 20 periodic checks
	if len(results) != 0 {
		t.Fatalf("%d reports of an unchanged result; each wakes the agent", len(results))
	}
	if err := os.Remove(filepath.Join(r.Path(), "/etc/bench/d2/file-2.conf")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-results:
		if err == nil {
			t.Fatal("reported no drift after a managed file was deleted")
		}
	case <-time.After(reportBound):
		t.Fatal("the drift was not reported")
	}
	time.Sleep(100 * time.Millisecond)
	if len(results) != 0 {
		t.Fatalf("the same drift was reported %d more times", len(results))
	}
}

// BenchmarkDriftCheck1000Files is the periodic check of 1,000 unchanged files (stat each,
// read none). Target: < 50 ms.
func BenchmarkDriftCheck1000Files(b *testing.B) {
	r, s := rootWith(b, 1000)
	c, err := NewChecker(r, s)
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Check(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := c.Check(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDriftCheckFull1000Files reads and compares every file (start, preflight).
func BenchmarkDriftCheckFull1000Files(b *testing.B) {
	r, s := rootWith(b, 1000)
	c, err := NewChecker(r, s)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := c.CheckFull(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCheckAllFindsEveryDifference: adoption needs the whole list, not the first.
func TestCheckAllFindsEveryDifference(t *testing.T) {
	r, s := rootWith(t, 4)
	c, err := NewChecker(r, s)
	if err != nil {
		t.Fatal(err)
	}
	if found, err := c.CheckAll(context.Background(), nil); err != nil || len(found) != 0 {
		t.Fatalf("fresh root: %v %v", found, err)
	}
	root := r.Path()
	os.WriteFile(filepath.Join(root, "/etc/bench/d1/file-1.conf"), []byte("other"), 0o644)
	os.Remove(filepath.Join(root, "/etc/bench/d3/file-3.conf"))
	os.Remove(filepath.Join(root, "/etc/systemd/system/m.service"))
	found, err := c.CheckAll(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range found {
		got = append(got, d.What+" "+d.Path)
	}
	want := []string{"content mismatch for file /etc/bench/d1/file-1.conf", "missing file /etc/bench/d3/file-3.conf",
		"expected a symlink to /dev/null /etc/systemd/system/m.service"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("CheckAll found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
