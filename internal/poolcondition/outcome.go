package poolcondition

import mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

// Outcome is how a pool's rollout stands: still going, finished, or stuck.
type Outcome int

const (
	InProgress Outcome = iota
	Complete
	Failed
)

// RolloutOutcome: Complete when the pool reports Updated on its target, Failed when Degraded.
func RolloutOutcome(p *mcfgv1.MachineConfigPool) Outcome {
	switch {
	case IsTrue(&p.Status, mcfgv1.MachineConfigPoolDegraded):
		return Failed
	case p.Spec.Configuration.Name != "" && p.Status.Configuration.Name == p.Spec.Configuration.Name &&
		IsTrue(&p.Status, mcfgv1.MachineConfigPoolUpdated):
		return Complete
	}
	return InProgress
}
