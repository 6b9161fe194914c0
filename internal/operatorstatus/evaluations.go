package operatorstatus

import (
	"slices"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/yaml"
)

// Fleet evaluations, OpenShift's operator's: settings OpenShift means to stop supporting, which
// its telemetry counts through EvaluationConditionsDetected.
const (
	EvaluationFailSwapOn = "failswapon: KubeletConfig setting is currently unsupported by OpenShift"
	EvaluationRunc       = "runc: transition to default crun"
)

// Evaluations lists, sorted, the evaluations the KubeletConfigs and ContainerRuntimeConfigs
// trigger. A kubelet config that does not decode is skipped (the KubeletConfig controller
// reports it).
func Evaluations(kubeletConfigs []mcfgv1.KubeletConfig, runtimeConfigs []mcfgv1.ContainerRuntimeConfig) []string {
	var out []string
	if slices.ContainsFunc(kubeletConfigs, disablesFailSwapOn) {
		out = append(out, EvaluationFailSwapOn)
	}
	if slices.ContainsFunc(runtimeConfigs, func(c mcfgv1.ContainerRuntimeConfig) bool {
		return c.Spec.ContainerRuntimeConfig != nil && c.Spec.ContainerRuntimeConfig.DefaultRuntime == mcfgv1.ContainerRuntimeDefaultRuntimeRunc
	}) {
		out = append(out, EvaluationRunc)
	}
	slices.Sort(out)
	return out
}

func disablesFailSwapOn(kc mcfgv1.KubeletConfig) bool {
	if kc.Spec.KubeletConfig == nil || kc.Spec.KubeletConfig.Raw == nil {
		return false
	}
	var cfg struct {
		FailSwapOn *bool `json:"failSwapOn"`
	}
	if yaml.Unmarshal(kc.Spec.KubeletConfig.Raw, &cfg) != nil {
		return false
	}
	return cfg.FailSwapOn != nil && !*cfg.FailSwapOn
}

func evaluationCondition(kubeletConfigs []mcfgv1.KubeletConfig, runtimeConfigs []mcfgv1.ContainerRuntimeConfig) configv1.ClusterOperatorStatusCondition {
	c := configv1.ClusterOperatorStatusCondition{Type: configv1.EvaluationConditionsDetected, Status: configv1.ConditionFalse, Reason: ReasonAsExpected}
	if e := Evaluations(kubeletConfigs, runtimeConfigs); len(e) > 0 {
		c.Status, c.Reason = configv1.ConditionTrue, strings.Join(e, "::")
	}
	return c
}
