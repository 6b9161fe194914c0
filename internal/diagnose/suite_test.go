package diagnose

import (
	"os"
	"testing"

	"github.com/mco-dev/mco/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithControlPlane(m, "diagnose", func(e *testenv.Env) (func(), error) {
		env = e
		return nil, nil
	}))
}
