package plan

import (
	"context"
	"fmt"

	operatorv1 "github.com/openshift/api/operator/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/render"
)

// ClusterPolicies reads MachineConfiguration `cluster` and returns the policy in effect
// (PoliciesOf), or the defaults alone when there is none (or the cluster does not serve the
// kind). The one read shared by the agent, `mco plan`, the render controller and the unpause
// plan controller, so they cannot disagree about what a change does; mc is nil when the
// defaults apply. The rest of this package stays pure.
func ClusterPolicies(ctx context.Context, c client.Reader) (Policies, *operatorv1.MachineConfiguration, error) {
	mc := &operatorv1.MachineConfiguration{}
	err := c.Get(ctx, client.ObjectKey{Name: protocol.ClusterMachineConfiguration}, mc)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return DefaultPolicies(), nil, nil
	case err != nil:
		return Policies{}, nil, fmt.Errorf("reading MachineConfiguration %s: %w", protocol.ClusterMachineConfiguration, err)
	}
	return PoliciesOf(mc), mc, nil
}

// PoliciesOf is what MachineConfiguration mc says about updates: its spec.nodeDisruptionPolicy
// over the defaults (PoliciesFrom) and its spec.irreconcilableValidationOverrides. A nil mc
// gives the defaults.
func PoliciesOf(mc *operatorv1.MachineConfiguration) Policies {
	if mc == nil {
		return DefaultPolicies()
	}
	p := PoliciesFrom(&mc.Spec.NodeDisruptionPolicy)
	p.Irreconcilable = render.OverridesOf(mc.Spec.IrreconcilableValidationOverrides)
	return p
}
