package testenv

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mco-dev/mco/internal/ignitionclient"
)

// RunIgnition runs the real Ignition client (built by `make tools`) with pointer as its config
// against a fresh root, as a booting machine would. It returns the root and Ignition's output; a
// missing binary fails the test.
func RunIgnition(t testing.TB, pointer []byte) (root, output string, err error) {
	t.Helper()
	work := t.TempDir()
	root = filepath.Join(work, "root")
	output, err = ignitionclient.Run(context.Background(), RequireTool(t, "ignition"), pointer, root, filepath.Join(work, "ignition"))
	return root, output, err
}
