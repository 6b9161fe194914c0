package apply

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

func thousandFiles(version string) nodefiles.Set {
	var s nodefiles.Set
	for i := range 1000 {
		p := fmt.Sprintf("/etc/bench/d%02d/file-%04d.conf", i%20, i)
		s.Entries = append(s.Entries, nodefiles.Entry{Path: p, Data: []byte(strings.Repeat("x", 200) + version + p), Perm: 0o644, ParentPerm: 0o755})
	}
	return s
}

// BenchmarkApply1000Files writes 1,000 new files as one transaction, journal to commit
// (ownership stamps included). Target: < 1 s.
func BenchmarkApply1000Files(b *testing.B) {
	benchApply(b, nodefiles.Set{}, thousandFiles("v1"))
}

// BenchmarkApplyChange1000Files replaces 1,000 managed files (each backed up in the journal).
func BenchmarkApplyChange1000Files(b *testing.B) {
	benchApply(b, thousandFiles("v1"), thousandFiles("v2"))
}

func benchApply(b *testing.B, from, to nodefiles.Set) {
	for b.Loop() {
		b.StopTimer()
		root := newNodeRoot(b)
		if len(from.Entries) > 0 {
			transition(b, root, Request{To: "from", New: from, Record: record("from")})
		}
		r, err := noderoot.Open(root)
		if err != nil {
			b.Fatal(err)
		}
		a := &Applier{Root: r, Systemd: nil}
		b.StartTimer()
		txn, err := a.Begin(context.Background(), Request{From: "from", To: "to", Old: from, New: to, Record: record("to")})
		if err != nil {
			b.Fatal(err)
		}
		if err := txn.Apply(context.Background()); err != nil {
			b.Fatal(err)
		}
		if err := txn.Commit(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		r.Close()
		b.StartTimer()
	}
}
