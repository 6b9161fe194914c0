package plan

import (
	"context"
	"fmt"

	operatorv1 "github.com/openshift/api/operator/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
)

// ClusterPolicies reads MachineConfiguration `cluster` and returns the policy in effect: its
// spec.nodeDisruptionPolicy over the defaults, or the defaults alone when there is none (or
// the cluster does not serve the kind). The one read shared by the agent, `mco plan` and the
// unpause plan controller, so they cannot disagree about what a change does; mc is nil when
// the defaults apply. The rest of this package stays pure.
func ClusterPolicies(ctx context.Context, c client.Reader) (Policies, *operatorv1.MachineConfiguration, error) {
	mc := &operatorv1.MachineConfiguration{}
	err := c.Get(ctx, client.ObjectKey{Name: protocol.ClusterMachineConfiguration}, mc)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return DefaultPolicies(), nil, nil
	case err != nil:
		return Policies{}, nil, fmt.Errorf("reading MachineConfiguration %s: %w", protocol.ClusterMachineConfiguration, err)
	}
	return PoliciesFrom(&mc.Spec.NodeDisruptionPolicy), mc, nil
}
