package apply

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"strconv"
	"strings"

	sigsjson "sigs.k8s.io/json"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
)

// priorKind is what a touched path was before the transaction.
type priorKind string

const (
	priorAbsent  priorKind = "absent"
	priorFile    priorKind = "file"
	priorSymlink priorKind = "symlink"
)

type prior struct {
	Path string    `json:"path"`
	Kind priorKind `json:"kind"`
	// Backup is the path (in the root) of a hard link to, or copy of, the file, for priorFile.
	Backup string `json:"backup,omitempty"`
	// Dev and Ino identify the file itself: still there, it was never replaced (a copied
	// backup is another inode, e.g. of an immutable file that refused both the link and the
	// rename).
	Dev    uint64 `json:"dev,omitempty"`
	Ino    uint64 `json:"ino,omitempty"`
	Target string `json:"target,omitempty"`
}

type link struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

// journalVersion is the format writeJournal writes. Journals from before the field existed
// (no version) are the same format.
const journalVersion = 1

// journal is the on-disk record of a transaction in progress.
type journal struct {
	Version int    `json:"version,omitempty"`
	From    string `json:"from"`
	To      string `json:"to"`
	// Priors lists every path the transaction may change, in the order it changes them.
	Priors []prior `json:"priors"`
	// CreatedDirs are the directories Apply is about to create, outermost first: absent when
	// journaled (at Begin, again by Apply if the disk changed since). A rollback removes them
	// only while they are empty directories: anything else there is not the transaction's.
	// (Earlier versions listed a dangling symlink as absent, and failed on it.)
	CreatedDirs []string `json:"createdDirs,omitempty"`
	// UnitLinks and UnitDirs snapshot /etc/systemd/system when enablement changes, because
	// systemctl decides itself which symlinks enable a unit.
	UnitLinks    []link   `json:"unitLinks,omitempty"`
	UnitDirs     []string `json:"unitDirs,omitempty"`
	SnapshotUnit bool     `json:"snapshotUnits,omitempty"`
	// OSStaged: the OS backend may have staged a deployment that a rollback must discard.
	OSStaged bool `json:"osStaged,omitempty"`
}

func writeJournal(r *noderoot.Root, j *journal) error {
	j.Version = journalVersion
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := r.WriteFile(JournalPath, data, noderoot.WriteOptions{Perm: 0o600}); err != nil {
		return fmt.Errorf("journaling the transaction: %w", err)
	}
	return nil
}

func readJournal(r *noderoot.Root) (*journal, error) {
	info, err := r.Lstat(JournalPath)
	if err != nil || info.Type == noderoot.Missing {
		return nil, err
	}
	data, err := r.ReadFile(JournalPath)
	if err != nil {
		return nil, err
	}
	return decodeJournal(data)
}

// decodeJournal reads a journal strictly and checks every path in it before a rollback acts on
// any: the rollback replaces, links and removes what the journal names, so a damaged journal
// (truncated, a field of the wrong type, a relative or ".." path, a backup outside journal.d,
// a version this agent does not know) is refused whole, naming the field, rather than half
// rolled back.
func decodeJournal(data []byte) (*journal, error) {
	var j journal
	// encoding/json would match keys case-insensitively and let a repeated key silently win;
	// the strict decoder refuses both, and unknown fields (all it lists, named by full path).
	strict, err := sigsjson.UnmarshalStrict(data, &j)
	if err != nil {
		return nil, journalError("", decodeReason(data, err))
	}
	if len(strict) > 0 {
		return nil, journalError("", strictReason(strict))
	}
	if field, reason := j.problem(); reason != "" {
		return nil, journalError(field, reason)
	}
	return &j, nil
}

func journalError(field, reason string) error {
	if field != "" {
		reason = field + ": " + reason
	}
	return fmt.Errorf("corrupt journal %s: %s", JournalPath, reason)
}

// decodeReason says why the journal did not decode, naming the field where the decoder knows it.
func decodeReason(data []byte, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		want := "an object"
		switch te.Type.Kind() {
		case reflect.String:
			want = "a string"
		case reflect.Bool:
			want = "a boolean"
		case reflect.Slice:
			want = "a list"
		case reflect.Int, reflect.Uint64:
			want = "an integer"
		}
		return fmt.Sprintf("%s: got a JSON %s, want %s", te.Field, te.Value, want)
	}
	if syntax, off := sigsjson.SyntaxErrorOffset(err); syntax {
		switch {
		case off >= int64(len(data)):
			return "truncated: " + err.Error()
		case strings.Contains(err.Error(), "after top-level value"):
			return "data after the journal: " + err.Error()
		}
	}
	return err.Error()
}

// strictReason names what the strict decoder refused: a key no field takes (or one differing
// from it only in case), or a key given twice, whose first value would silently be dropped.
func strictReason(errs []error) string {
	reasons := make([]string, len(errs))
	for i, e := range errs {
		reasons[i] = e.Error()
		var fe sigsjson.FieldError
		if !errors.As(e, &fe) {
			continue
		}
		field := strings.NewReplacer("[", ".", "]", "").Replace(fe.FieldPath())
		if strings.HasPrefix(e.Error(), "duplicate field") {
			reasons[i] = fmt.Sprintf("key %q is given more than once", field)
		} else {
			reasons[i] = fmt.Sprintf("unknown field %q (a journal of another agent version?)", field)
		}
	}
	return strings.Join(reasons, "; ")
}

// problem names the first field of j a rollback must not act on, and why.
func (j *journal) problem() (field, reason string) {
	if j.Version != 0 && j.Version != journalVersion {
		return "version", fmt.Sprintf("%d is not a journal version this agent reads (%d); was it written by a newer agent?", j.Version, journalVersion)
	}
	for i, pr := range j.Priors {
		f := fmt.Sprintf("priors.%d", i)
		if r := pathReason(pr.Path); r != "" {
			return f + ".path", r
		}
		switch pr.Kind {
		case priorAbsent:
		case priorSymlink:
			if pr.Target == "" {
				return f + ".target", "a symlink's prior state needs its target"
			}
		case priorFile:
			if r := pathReason(pr.Backup); r != "" {
				return f + ".backup", r
			}
			if path.Dir(pr.Backup) != BackupDir {
				return f + ".backup", fmt.Sprintf("%q is not in %s, where backups are kept", pr.Backup, BackupDir)
			}
		default:
			return f + ".kind", fmt.Sprintf("%q is not one of %s, %s, %s", pr.Kind, priorAbsent, priorFile, priorSymlink)
		}
	}
	for i, d := range j.CreatedDirs {
		if r := pathReason(d); r != "" {
			return fmt.Sprintf("createdDirs.%d", i), r
		}
	}
	// The unit snapshot is restored by making and removing links and directories; only those
	// under /etc/systemd/system are the snapshot's.
	for i, l := range j.UnitLinks {
		if r := unitPathReason(l.Path); r != "" {
			return fmt.Sprintf("unitLinks.%d.path", i), r
		}
	}
	for i, d := range j.UnitDirs {
		if r := unitPathReason(d); r != "" {
			return fmt.Sprintf("unitDirs.%d", i), r
		}
	}
	return "", ""
}

func pathReason(p string) string {
	if !path.IsAbs(p) || path.Clean(p) != p || p == "/" {
		return fmt.Sprintf("%q is not a clean absolute path below /", p)
	}
	return ""
}

func unitPathReason(p string) string {
	if r := pathReason(p); r != "" {
		return r
	}
	if !strings.HasPrefix(p, nodefiles.UnitDir+"/") {
		return fmt.Sprintf("%q is not under %s", p, nodefiles.UnitDir)
	}
	return ""
}

func (t *Txn) journalPriors() error {
	r := t.a.Root
	created, err := r.MkdirAll(BackupDir, noderoot.DirSpec{Perm: 0o700})
	t.stateDirs = created
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var backups []string
	for _, o := range t.ops {
		if seen[o.path] {
			continue
		}
		seen[o.path] = true
		pr, err := t.capture(o.path, len(t.j.Priors))
		if err != nil {
			return err
		}
		if pr.Backup != "" {
			backups = append(backups, pr.Backup)
		}
		t.j.Priors = append(t.j.Priors, pr)
	}
	if !t.units.empty() {
		links, dirs, err := snapshotUnitLinks(r)
		if err != nil {
			return err
		}
		t.j.UnitLinks, t.j.UnitDirs, t.j.SnapshotUnit = links, dirs, true
	}
	if err := r.SyncDirs(append(backups, BackupDir+"/x")); err != nil {
		return err
	}
	return writeJournal(r, t.j)
}

// capture saves what is at p now: a hard link (or copy) of a file, a symlink's target, or
// that nothing is there.
func (t *Txn) capture(p string, n int) (prior, error) {
	r := t.a.Root
	info, err := r.Lstat(p)
	if err != nil {
		return prior{}, err
	}
	switch info.Type {
	case noderoot.Missing:
		return prior{Path: p, Kind: priorAbsent}, nil
	case noderoot.Symlink:
		return prior{Path: p, Kind: priorSymlink, Target: info.Target}, nil
	case noderoot.Regular:
		backup := BackupDir + "/" + strconv.Itoa(n)
		if err := r.Link(p, backup); err != nil {
			if err := r.CopyFile(p, backup, true); err != nil {
				return prior{}, fmt.Errorf("backing up %s: %w", p, err)
			}
		}
		return prior{Path: p, Kind: priorFile, Backup: backup, Dev: info.Dev, Ino: info.Ino}, nil
	}
	return prior{}, fmt.Errorf("%s is a directory or special file; refusing to replace it", p)
}
