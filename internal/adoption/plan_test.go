package adoption

import (
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	for name, c := range map[string]struct {
		plan Plan
		want string
	}{
		"matches": {Plan{Target: "rendered-worker-1", Actions: "None"}, "already in rendered-worker-1: adopting changes nothing"},
		"one file, reboot": {Plan{Target: "r", Files: []FileChange{{Path: "/etc/chrony.conf", Change: ChangeContent}}, Actions: "Reboot", Drain: true, Reboot: true},
			"adopting into r would write 1 file (/etc/chrony.conf), drain, then reboot"},
		"restart only": {Plan{Target: "r", Files: []FileChange{{Path: "/etc/kubernetes/kubelet.conf.d/50-machineconfiguration.conf", Change: ChangeCreate}}, Actions: "Restart kubelet.service"},
			"adopting into r would write 1 file (/etc/kubernetes/kubelet.conf.d/50-machineconfiguration.conf), then restart kubelet.service"},
		"nothing to restart": {Plan{Target: "r", Units: []UnitChange{{Name: "a.service", Change: "enable"}}, Password: true, Actions: "None"},
			"adopting into r would change 1 unit (a.service), set core's password, with no restart or reboot"},
		"many files": {Plan{Target: "r", Files: []FileChange{{Path: "/a"}, {Path: "/b"}, {Path: "/c"}, {Path: "/d"}, {Path: "/e"}, {Path: "/f"}, {Path: "/g"}}, OS: []string{"kernelArguments"}, Actions: "Reboot", Reboot: true},
			"adopting into r would write 7 files (/a, /b, /c, /d, /e, and 2 more), change kernelArguments, then reboot"},
		"refused": {Plan{Target: "r", Files: []FileChange{{Path: "/a"}}, Refused: []string{"osImageURL: this host cannot switch OS images"}},
			"cannot be adopted into r: osImageURL: this host cannot switch OS images"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := c.plan.Summary(); got != c.want {
				t.Errorf("Summary()\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestEncodeFitsTheNode(t *testing.T) {
	big := strings.Repeat("line of text\n", 600) // ~7.8 KiB each
	p := Plan{Target: "r", Actions: "Reboot"}
	for i := range 8 {
		p.Files = append(p.Files, FileChange{Path: "/etc/f" + string(rune('a'+i)), Change: ChangeContent, Diff: big})
	}
	s, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) > MaxEncoded {
		t.Fatalf("encoded %d bytes, over %d", len(s), MaxEncoded)
	}
	back, err := Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	kept, dropped := 0, 0
	for _, f := range back.Files {
		switch {
		case f.Diff != "":
			kept++
		case strings.Contains(f.Note, "would not fit"):
			dropped++
		}
	}
	if kept == 0 || dropped == 0 || kept+dropped != 8 {
		t.Fatalf("kept %d diffs and dropped %d of 8; want some of each", kept, dropped)
	}
	if p.Files[0].Diff != big {
		t.Fatal("Encode changed its argument's files")
	}
}

func TestContentDiff(t *testing.T) {
	diff, note := ContentDiff("/etc/chrony.conf", []byte("pool 2.debian.pool.ntp.org iburst\nmakestep 1 3\n"), 0o644,
		[]byte("server 10.0.0.1 iburst\nmakestep 1 3\n"), 0o644)
	if note != "" || !strings.Contains(diff, "-pool 2.debian.pool.ntp.org iburst") || !strings.Contains(diff, "+server 10.0.0.1 iburst") ||
		!strings.Contains(diff, "--- host/etc/chrony.conf") {
		t.Fatalf("diff %q note %q", diff, note)
	}
	for name, c := range map[string]struct {
		host, want []byte
		hostPerm   uint32
		note       string
	}{
		"secret on the host": {[]byte("a"), []byte("b"), 0o600, "not world-readable"},
		"binary":             {[]byte("a\x00b"), []byte("b"), 0o644, "not text"},
		"large":              {[]byte(strings.Repeat("a", MaxDiffed+1)), []byte("b"), 0o644, "over 8 KiB"},
	} {
		if d, n := ContentDiff("/p", c.host, c.hostPerm, c.want, 0o644); d != "" || !strings.Contains(n, c.note) {
			t.Errorf("%s: diff %q note %q, want a note with %q", name, d, n, c.note)
		}
	}
}
