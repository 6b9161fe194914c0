// Package metrics tests every component's metrics endpoint off loopback against a real API
// server: HTTPS with the certificate the controller issues, and only tokens whose user may get
// /metrics. Its own package (and control plane) because it runs `mco controller`'s manager,
// whose controller names may exist once per process (test/integration runs another).
package metrics

import (
	"os"
	"testing"

	"github.com/mco-dev/mco/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithControlPlane(m, "metrics endpoints", func(e *testenv.Env) (func(), error) {
		env = e
		return nil, nil
	}))
}
