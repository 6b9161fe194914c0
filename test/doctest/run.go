package doctest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mco-dev/mco/internal/testenv"
)

// Session is where the pages' blocks run, as a user runs them in a checkout: a working directory
// whose entries are the checkout's (linked), with `_out/<name>` linked to the dev clusters the
// test made, bin/tools and bin on PATH, and only these documented substitutions made to a block:
//   - `/tmp/` is the session's own tmp/ (tests of one host share /tmp);
//   - each key of Subst, a placeholder the page shows (`<registry>/mco:<tag>`, an address), is
//     replaced by its value.
//
// A block still holding a `<placeholder>` after that fails: the test did not say what it is.
type Session struct {
	Dir    string
	Env    []string
	Subst  map[string]string
	blocks map[string]Block
}

// NewSession makes the working directory of a test's blocks; clusters maps a name under _out/
// (demo, kubeadm) to a dev cluster's directory, and kubeconfig is KUBECONFIG's value.
func NewSession(t testing.TB, clusters map[string]string, kubeconfig string) *Session {
	t.Helper()
	repo := testenv.RepoRoot()
	blocks, err := Load(repo)
	if err != nil {
		t.Fatalf("the docs' shell blocks: %v", err)
	}
	s := &Session{Dir: t.TempDir(), Subst: map[string]string{}, blocks: map[string]Block{}}
	for _, b := range blocks {
		if b.ID != "" {
			s.blocks[b.ID] = b
		}
	}
	entries, err := os.ReadDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == ".git" || e.Name() == "_out" {
			continue
		}
		if err := os.Symlink(filepath.Join(repo, e.Name()), filepath.Join(s.Dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"_out", "tmp"} {
		if err := os.Mkdir(filepath.Join(s.Dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, dir := range clusters {
		if err := os.Symlink(dir, filepath.Join(s.Dir, "_out", name)); err != nil {
			t.Fatal(err)
		}
	}
	s.Subst["/tmp/"] = filepath.Join(s.Dir, "tmp") + "/"
	path := filepath.Join(repo, "bin", "tools") + ":" + filepath.Join(repo, "bin") + ":" + os.Getenv("PATH")
	s.Env = append(os.Environ(), "PATH="+path, "KUBECONFIG="+kubeconfig, "HOME="+s.Dir, "EDITOR=false")
	return s
}

// Block is the block named id, for a test that reads what the page says.
func (s *Session) Block(t testing.TB, id string) Block {
	t.Helper()
	b, ok := s.blocks[id]
	if !ok {
		t.Fatalf("no shell block `<!-- doctest: %s -->` in README.md or docs/", id)
	}
	return b
}

// Run runs the block named id and compares its output with the page's, failing the test (with
// what the block printed) when it does not run as the page says; it returns the output.
func (s *Session) Run(t testing.TB, id string) string {
	t.Helper()
	b := s.Block(t, id)
	began := time.Now()
	out, err := s.run(b)
	if err != nil {
		t.Fatalf("%s (doctest %s), run as the page says:\n%s\n%v", b.Where(), id, indent(strings.TrimRight(b.Script, "\n")), err)
	}
	t.Logf("%s (doctest %s) ran as the page says in %s:\n%s", b.Where(), id, time.Since(began).Round(100*time.Millisecond), indent(strings.TrimRight(out, "\n")))
	return out
}

var placeholderRE = regexp.MustCompile(`<[A-Za-z][A-Za-z0-9 ._/-]*[A-Za-z0-9]>`)

// script is block b's text with the session's substitutions made.
func (s *Session) script(b Block) (string, error) {
	keys := make([]string, 0, len(s.Subst))
	for k := range s.Subst {
		keys = append(keys, k)
	}
	// Longest first: a placeholder may hold a shorter one.
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	script := b.Script
	for _, k := range keys {
		script = strings.ReplaceAll(script, k, s.Subst[k])
	}
	if left := placeholderRE.FindAllString(script, -1); len(left) > 0 {
		return "", fmt.Errorf("placeholders the test does not substitute: %s", strings.Join(left, ", "))
	}
	return script, nil
}

// errTrap reports the line and command that ended a block; the script's first line, so the
// block's lines are the script's less one.
const errTrap = `trap 'echo "doctest: line $((LINENO-1)) exited $?: $BASH_COMMAND" >&2' ERR` + "\n"

func (s *Session) run(b Block) (string, error) {
	script, err := s.script(b)
	if err != nil {
		return "", err
	}
	if b.Exit != 0 && strings.TrimSpace(b.Output) == "" {
		return "", fmt.Errorf("a block annotated exit=%d must show its output (its exit status alone does not tell a typo from the command)", b.Exit)
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", errTrap+script)
	cmd.Dir, cmd.Env = s.Dir, s.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err = cmd.Run()
	out := buf.String()
	code := 0
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return out, fmt.Errorf("still running after %s (timeout=%s); it printed:\n%s", b.Timeout, b.Timeout, indent(out))
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		return out, err
	}
	if code != b.Exit {
		return out, fmt.Errorf("exited %d, the page says %d; it printed:\n%s", code, b.Exit, indent(out))
	}
	// The trap's line is for a reader of a failure; an expected non-zero exit prints it too.
	shown := out
	if b.Exit != 0 {
		shown = trapLineRE.ReplaceAllString(out, "")
	}
	if b.Output != "" {
		if err := MatchOutput(b.Output, shown); err != nil {
			return out, fmt.Errorf("its output is not what the page shows: %v", err)
		}
	}
	return shown, nil
}

var trapLineRE = regexp.MustCompile(`(?m)^doctest: line \d+ exited \d+: .*\n?`)
