package render

import (
	"context"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/mco-dev/mco/internal/controller/enqueue"
	"github.com/mco-dev/mco/internal/daemon/plan"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/render"
)

// overrides are the irreconcilable changes MachineConfiguration cluster allows
// (spec.irreconcilableValidationOverrides), read as the agent and `mco plan` read them, so the
// three agree on what is refused.
func (r *Reconciler) overrides(ctx context.Context) (render.Overrides, error) {
	p, _, err := plan.ClusterPolicies(ctx, r.Client)
	return p.Irreconcilable, err
}

// A change to MachineConfiguration cluster's spec renders every pool again (allPools): a pool
// refused for a change to disks, filesystems or raid renders once an override allows it.
func machineConfiguration() client.Object { return &operatorv1.MachineConfiguration{} }

var clusterSpecChanged = builder.WithPredicates(
	predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == protocol.ClusterMachineConfiguration }),
	predicate.GenerationChangedPredicate{})

func (r *Reconciler) toAllPools() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(enqueue.All(r.Client, &mcfgv1.MachineConfigPoolList{}, "pools for a MachineConfiguration event"))
}
