package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/mco-dev/mco/test/clustertest"
)

// oneApplyOneReboot: clustertest.OneApplyOneReboot on the settled pool.
func oneApplyOneReboot(t *testing.T, ctx context.Context, cl *clustertest.Cluster, machines []string) {
	t.Logf("rolled out in %s", cl.OneApplyOneReboot(t, ctx, machines).Round(time.Second))
}
