package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	g, err := load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "layering:", err)
		os.Exit(2)
	}
	violations := Check(g, Rules)
	for _, v := range violations {
		fmt.Fprintln(os.Stderr, "layering:", v)
	}
	if len(violations) > 0 {
		fmt.Fprintf(os.Stderr, "layering: %d imports break the rules in hack/layering/rules.go (docs/architecture.md, \"Layering\")\n", len(violations))
		os.Exit(1)
	}
}

// load reads the module's import graph with go list, test files left out: the rules are the
// shipped code's.
func load() (Graph, error) {
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Module,Error", "./...")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	return parse(strings.NewReader(string(out)))
}

type listed struct {
	ImportPath string
	Imports    []string
	Module     *struct{ Path string }
	Error      *struct{ Err string }
}

func parse(r io.Reader) (Graph, error) {
	dec := json.NewDecoder(r)
	g := Graph{}
	var module string
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		if p.Error != nil {
			return nil, fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		if p.Module == nil {
			continue
		}
		module = p.Module.Path
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		g[rel] = nil
		for _, imp := range p.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				g[rel] = append(g[rel], strings.TrimPrefix(strings.TrimPrefix(imp, module), "/"))
			}
		}
	}
	return g, nil
}
