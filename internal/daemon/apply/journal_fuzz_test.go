package apply

import (
	"encoding/json"
	"path"
	"reflect"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
)

// FuzzJournalDecode feeds decodeJournal any file. A journal that decodes names only clean
// absolute paths below / (backups in journal.d, unit links and directories under
// /etc/systemd/system, priors of a known kind), since a rollback replaces and removes what it
// names; it reads back the same once written again; anything else is refused with an error
// naming the journal.
//
// Seeds: the f.Add ones and testdata/fuzz/FuzzJournalDecode (journals as Begin writes them).
func FuzzJournalDecode(f *testing.F) {
	for _, seed := range []string{
		`{"version":1,"from":"rendered-worker-a","to":"rendered-worker-b","priors":[{"path":"/etc/chrony.conf","kind":"file","backup":"/etc/machine-config-daemon/journal.d/0","dev":2049,"ino":1234},{"path":"/etc/motd","kind":"absent"}]}`,
		`{"from":"a","to":"b","priors":[{"path":"/etc/localtime","kind":"symlink","target":"../usr/share/zoneinfo/UTC"}]}`,
		`{"from":"a","to":"b","priors":null,"createdDirs":["/etc/x","/etc/x/y"],"unitLinks":[{"path":"/etc/systemd/system/multi-user.target.wants/a.service","target":"/etc/systemd/system/a.service"}],"unitDirs":["/etc/systemd/system/multi-user.target.wants"],"snapshotUnits":true,"osStaged":true}`,
		`{"from":"a","to":"b","priors":[{"path":"etc/x","kind":"absent"}]}`,
		`{"from":"a","to":"b","priors":[{"path":"/etc/x","kind":"file","backup":"/etc/machine-config-daemon/journal.d/../../shadow"}]}`,
		`{"from":"a","to":"b","priors":[]} {}`, `{"from":"a"`, `null`, ``,
	} {
		f.Add([]byte(seed))
	}
	clean := func(p string) bool { return path.IsAbs(p) && path.Clean(p) == p && p != "/" }
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := decodeJournal(data)
		if err != nil {
			if j != nil || !strings.Contains(err.Error(), JournalPath) {
				t.Fatalf("decodeJournal(%q): error %v does not name the journal (or a journal came with it)", data, err)
			}
			return
		}
		if j.Version != 0 && j.Version != journalVersion {
			t.Fatalf("decodeJournal(%q) accepted version %d", data, j.Version)
		}
		for _, pr := range j.Priors {
			if !clean(pr.Path) {
				t.Fatalf("decodeJournal(%q) accepted prior path %q", data, pr.Path)
			}
			switch pr.Kind {
			case priorAbsent, priorSymlink:
			case priorFile:
				if !clean(pr.Backup) || path.Dir(pr.Backup) != BackupDir {
					t.Fatalf("decodeJournal(%q) accepted backup %q", data, pr.Backup)
				}
			default:
				t.Fatalf("decodeJournal(%q) accepted prior kind %q", data, pr.Kind)
			}
		}
		for _, d := range j.CreatedDirs {
			if !clean(d) {
				t.Fatalf("decodeJournal(%q) accepted created directory %q", data, d)
			}
		}
		under := func(p string) bool { return clean(p) && strings.HasPrefix(p, nodefiles.UnitDir+"/") }
		for _, l := range j.UnitLinks {
			if !under(l.Path) {
				t.Fatalf("decodeJournal(%q) accepted unit link %q", data, l.Path)
			}
		}
		for _, d := range j.UnitDirs {
			if !under(d) {
				t.Fatalf("decodeJournal(%q) accepted unit directory %q", data, d)
			}
		}
		again, err := json.Marshal(j)
		if err != nil {
			t.Fatalf("decodeJournal(%q) gave a journal that does not encode: %v", data, err)
		}
		j2, err := decodeJournal(again)
		if err != nil || !reflect.DeepEqual(withoutEmpty(j2), withoutEmpty(j)) {
			t.Fatalf("decodeJournal(%q) is not stable: written again as %s it reads %+v, %v", data, again, j2, err)
		}
	})
}

// withoutEmpty makes empty lists nil: the journal omits them when written, so [] and an absent
// list mean the same.
func withoutEmpty(j *journal) journal {
	if j == nil {
		return journal{}
	}
	out := *j
	if len(out.Priors) == 0 {
		out.Priors = nil
	}
	if len(out.CreatedDirs) == 0 {
		out.CreatedDirs = nil
	}
	if len(out.UnitLinks) == 0 {
		out.UnitLinks = nil
	}
	if len(out.UnitDirs) == 0 {
		out.UnitDirs = nil
	}
	return out
}
