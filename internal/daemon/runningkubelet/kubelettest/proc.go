package kubelettest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Proc is a process directory laid out as /proc, in a test's temporary directory, for
// runningkubelet.Find.
type Proc struct {
	// Dir is the directory, runningkubelet.Find's procDir.
	Dir string
	t   testing.TB
}

// NewProc is a process directory where no kubelet runs yet: it holds init (PID 1) and "self",
// whose comm is kubelet but which is no process, so a Find that takes it for one fails.
func NewProc(t testing.TB) *Proc {
	t.Helper()
	p := &Proc{Dir: t.TempDir(), t: t}
	p.Write("1/comm", "systemd\n")
	p.Write("1/cmdline", "/sbin/init\x00")
	p.Write("self/comm", "kubelet\n")
	return p
}

// Kubelet starts a kubelet as process pid with the command line args (the program first).
func (p *Proc) Kubelet(pid int, args ...string) {
	p.t.Helper()
	p.Write(strconv.Itoa(pid)+"/comm", "kubelet\n")
	p.Write(strconv.Itoa(pid)+"/cmdline", strings.Join(args, "\x00")+"\x00")
}

// Write writes the file at rel, a slash-separated path in Dir (a process's files are under
// "<pid>/root/"), with its parent directories.
func (p *Proc) Write(rel, contents string) {
	p.t.Helper()
	name := filepath.Join(p.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(contents), 0o644); err != nil {
		p.t.Fatal(err)
	}
}
