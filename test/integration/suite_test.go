package integration

import (
	"os"
	"testing"

	"github.com/mco-dev/mco/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithControlPlane(m, "cross-component", func(e *testenv.Env) (func(), error) {
		env = e
		return nil, nil
	}))
}
