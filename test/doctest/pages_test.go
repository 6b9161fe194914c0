package doctest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/testenv"
)

// TestPagesAnnotated: every shell block of README and docs/ either runs or says why not, and
// every block that runs is run by a test (its ID named in test/e2e or here), so a new block
// cannot go untested unnoticed.
func TestPagesAnnotated(t *testing.T) {
	repo := testenv.RepoRoot()
	blocks, err := Load(repo)
	if err != nil {
		t.Fatal(err)
	}
	var sources strings.Builder
	for _, pattern := range []string{"test/e2e/*_test.go", "test/doctest/*_test.go"} {
		files, _ := filepath.Glob(filepath.Join(repo, pattern))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sources.Write(data)
		}
	}
	run, skipped := 0, 0
	for _, b := range blocks {
		if b.Skip != "" {
			skipped++
			t.Logf("skipped %s: %s", b.Where(), b.Skip)
			continue
		}
		run++
		if !regexp.MustCompile(`"` + regexp.QuoteMeta(b.ID) + `"`).MatchString(sources.String()) {
			t.Errorf("%s: block %q is run by no test (name it in test/e2e where its cluster is)", b.Where(), b.ID)
		}
	}
	t.Logf("%d shell blocks run, %d skipped", run, skipped)
	if run == 0 {
		t.Error("no block runs")
	}
}

// TestOfflineBlocks runs the blocks that need no cluster.
func TestOfflineBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bin/mco")
	}
	testenv.RequireMCO(t)
	s := NewSession(t, nil, os.DevNull)
	s.Run(t, "validate-render")
}

// TestATypoFails: the runner fails a block a typo broke, whether the typo makes a command fail
// or only changes what it prints.
func TestATypoFails(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bin/mco")
	}
	testenv.RequireMCO(t)
	s := NewSession(t, nil, os.DevNull)
	good := s.Block(t, "validate-render")
	for name, typo := range map[string]func(Block) Block{
		"a misspelt subcommand": func(b Block) Block { b.Script = strings.Replace(b.Script, "mco validate", "mco valdiate", 1); return b },
		"a misspelt file": func(b Block) Block {
			b.Script = strings.Replace(b.Script, "80-worker-kargs", "80-worker-karg", 1)
			return b
		},
		"another pool": func(b Block) Block {
			b.Script = strings.Replace(b.Script, "--pool worker", "--pool master", 1)
			return b
		},
	} {
		t.Run(name, func(t *testing.T) {
			bad := typo(good)
			if bad.Script == good.Script {
				t.Fatal("the typo changed nothing: the block is not what this test expects")
			}
			out, err := s.run(bad)
			if err == nil {
				t.Fatalf("the block ran as the page says despite the typo:\n%s\n%s", bad.Script, out)
			}
			t.Logf("fails: %v", err)
		})
	}
}
