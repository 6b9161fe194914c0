package operatorstatus

import (
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
)

// poolStatus is one pool's line in status.extension, in OpenShift's operator's words, with
// mco's NodeUnresponsive, a paused pool and one waiting only for held nodes added.
func poolStatus(p *mcfgv1.MachineConfigPool) string {
	st := &p.Status
	for _, d := range []struct {
		t    mcfgv1.MachineConfigPoolConditionType
		what string
	}{
		{mcfgv1.MachineConfigPoolRenderDegraded, "rendering fails"},
		{mcfgv1.MachineConfigPoolNodeDegraded, "nodes fail"},
		{poolcondition.NodeUnresponsive, "nodes are unresponsive"},
	} {
		if c := poolcondition.Get(st, d.t); c != nil && c.Status == corev1.ConditionTrue {
			return fmt.Sprintf("pool is degraded because %s with %q: %q", d.what, c.Reason, c.Message)
		}
	}
	switch {
	case poolcondition.IsTrue(st, mcfgv1.MachineConfigPoolUpdated):
		return fmt.Sprintf("all %d nodes are at latest configuration %s", st.MachineCount, st.Configuration.Name)
	case poolcondition.IsTrue(st, mcfgv1.MachineConfigPoolUpdating):
		return fmt.Sprintf("%d (ready %d) out of %d nodes are updating to latest configuration %s",
			st.UpdatedMachineCount, st.ReadyMachineCount, st.MachineCount, p.Spec.Configuration.Name)
	case poolcondition.IsTrue(st, poolcondition.NodesHeld):
		return fmt.Sprintf("pool waits for held nodes with %d out of %d nodes at latest configuration %s: %s",
			st.UpdatedMachineCount, st.MachineCount, p.Spec.Configuration.Name, poolcondition.Get(st, poolcondition.NodesHeld).Message)
	case p.Spec.Paused && p.Spec.Configuration.Name != "":
		return fmt.Sprintf("pool is paused with %d out of %d nodes at latest configuration %s",
			st.UpdatedMachineCount, st.MachineCount, p.Spec.Configuration.Name)
	}
	return "<unknown>"
}

// degradedPoolErrors names every Degraded pool, in OpenShift's operator's words.
func degradedPoolErrors(pools []mcfgv1.MachineConfigPool) []string {
	var out []string
	for i := range pools {
		st := &pools[i].Status
		if !poolcondition.IsTrue(st, mcfgv1.MachineConfigPoolDegraded) {
			continue
		}
		out = append(out, fmt.Sprintf("MachineConfigPool %s is not ready, retrying. Status: (pool degraded: true total: %d, ready %d, updated: %d, unavailable: %d, reason: %s)",
			pools[i].Name, st.MachineCount, st.ReadyMachineCount, st.UpdatedMachineCount, st.UnavailableMachineCount,
			poolcondition.Get(st, mcfgv1.MachineConfigPoolDegraded).Message))
	}
	return out
}

func required(p *mcfgv1.MachineConfigPool) bool {
	_, ok := p.Labels[protocol.RequiredForUpgradeLabel]
	return ok
}

// ConfigNames lists the MachineConfigs whose generated-by-controller-version the upgrade rule
// reads (Inputs.ConfigVersions): each required pool's current rendered config and its sources.
func ConfigNames(pools []mcfgv1.MachineConfigPool) []string {
	var names []string
	for i := range pools {
		p := &pools[i]
		if required(p) && p.Status.Configuration.Name != "" {
			names = append(names, configNames(p)...)
		}
	}
	return names
}

// configNames are the pool's current rendered config and the configs it was rendered from.
func configNames(p *mcfgv1.MachineConfigPool) []string {
	names := []string{p.Status.Configuration.Name}
	for _, s := range p.Status.Configuration.Source {
		names = append(names, s.Name)
	}
	return names
}

// requiredPoolsWaiting says why each required pool has not reached this controller version's
// configuration yet (waiting), and which of those are paused, so never will (OpenShift's
// operator fails its sync for those at once).
func requiredPoolsWaiting(pools []mcfgv1.MachineConfigPool, versions map[string]string, controllerVersion string) (waiting, paused []string) {
	for i := range pools {
		p := &pools[i]
		if !required(p) {
			continue
		}
		if err := configurationProblem(p, versions, controllerVersion); err != "" {
			waiting = append(waiting, fmt.Sprintf("MachineConfigPool %s has not progressed to latest configuration: %s, retrying", p.Name, err))
		} else if p.Generation > p.Status.ObservedGeneration || poolcondition.RolloutOutcome(p) != poolcondition.Complete {
			st := &p.Status
			waiting = append(waiting, fmt.Sprintf("required MachineConfigPool %s is not ready, retrying. Status: (total: %d, ready %d, updated: %d, unavailable: %d, degraded: %d)",
				p.Name, st.MachineCount, st.ReadyMachineCount, st.UpdatedMachineCount, st.UnavailableMachineCount, st.DegradedMachineCount))
		} else {
			continue
		}
		if p.Spec.Paused {
			paused = append(paused, fmt.Sprintf("required MachineConfigPool %s is paused and cannot sync until it is unpaused", p.Name))
		}
	}
	return waiting, paused
}

// configurationProblem checks that the pool's current rendered config, and its generated
// sources, were made by this controller version; admins' own MachineConfigs carry no version
// and are not checked.
func configurationProblem(p *mcfgv1.MachineConfigPool, versions map[string]string, controllerVersion string) string {
	status := poolStatus(p)
	rendered := p.Status.Configuration.Name
	switch {
	case p.Spec.Configuration.Name == "":
		return fmt.Sprintf("configuration spec for pool %s is empty: %s", p.Name, status)
	case rendered == "":
		return fmt.Sprintf("configuration status for pool %s is empty: %s", p.Name, status)
	case len(p.Status.Configuration.Source) == 0:
		return fmt.Sprintf("list of MachineConfigs that were used to generate configuration for pool %s is empty: %s", p.Name, status)
	}
	for _, name := range configNames(p) {
		v, ok := versions[name]
		switch {
		case !ok:
			return apierrors.NewNotFound(mcfgv1.Resource("machineconfig"), name).Error()
		case v == "" && name == rendered:
			return fmt.Sprintf("%s must be created by controller version %s: %s", name, controllerVersion, status)
		case v != "" && v != controllerVersion:
			return fmt.Sprintf("controller version mismatch for %s expected %s has %s: %s", name, controllerVersion, v, status)
		}
	}
	return ""
}
