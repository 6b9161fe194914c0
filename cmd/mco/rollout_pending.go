//go:build !mcoserver && !mcocontroller

package main

import (
	"context"
	"fmt"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/changeplan"
)

// pendingRender says whether pool's MachineConfigs, as they are on the cluster now, render to a
// config other than the pool's target: a change was applied (`kubectl apply` returns before the
// controller renders it) and the pool's Updated is about the config before it. It renders the
// pool the way `mco plan` does, with the render controller's own core. "" means nothing pending.
func pendingRender(ctx context.Context, c client.Client, pools []mcfgv1.MachineConfigPool, name string) (string, error) {
	var mcs mcfgv1.MachineConfigList
	if err := c.List(ctx, &mcs); err != nil {
		return "", err
	}
	cluster := changeplan.Cluster{}
	for i := range pools {
		cluster.Pools = append(cluster.Pools, &pools[i])
	}
	for i := range mcs.Items {
		cluster.MachineConfigs = append(cluster.MachineConfigs, &mcs.Items[i])
	}
	report, err := changeplan.Live(cluster, changeplan.Applied{}, name)
	if err != nil {
		return "", err
	}
	for _, p := range report.Pools {
		switch {
		case p.Pool != name:
		case p.Error != "":
			// The controller will say RenderDegraded once it renders; wait for that verdict.
			return fmt.Sprintf("its MachineConfigs changed and do not render (%s); waiting for the render controller's verdict", strings.SplitN(p.Error, "\n", 2)[0]), nil
		case p.Rendered != "" && p.Rendered != p.Target:
			return fmt.Sprintf("its MachineConfigs changed: waiting for the render controller to target %s (now %s)", p.Rendered, p.Target), nil
		}
	}
	return "", nil
}
