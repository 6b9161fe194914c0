package kubeletconfig

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

const kubeletConfigField = "spec.kubeletConfig"

// Validate refuses what OpenShift refuses in any KubeletConfig, whatever its pools: fields the
// platform owns (a node with another cgroup driver, cluster DNS or swap setting may not come
// back after a reboot), feature gates (they come from the cluster), system-reserved together
// with auto-sizing, and a system-reserved cgroup other than the system cgroup.
func Validate(kc *mcfgv1.KubeletConfig) error {
	if l := kc.Spec.LogLevel; l != nil && (*l < 0 || *l > 10) {
		return fieldError(kc.Name, "spec.logLevel", "%d is not a valid log level [0,10]", *l)
	}
	cfg, err := userConfig(kc)
	if err != nil || cfg == nil {
		return err
	}
	forbidden := func(field, contains string) error {
		return fieldError(kc.Name, kubeletConfigField+"."+field, "is not allowed to be set, but contains: %s", contains)
	}
	switch {
	case cfg.CgroupDriver != "":
		return forbidden("cgroupDriver", cfg.CgroupDriver)
	case len(cfg.ClusterDNS) > 0:
		return forbidden("clusterDNS", strings.Join(cfg.ClusterDNS, ", "))
	case cfg.ClusterDomain != "":
		return forbidden("clusterDomain", cfg.ClusterDomain)
	case len(cfg.FeatureGates) > 0:
		return forbidden("featureGates", featureGateList(cfg.FeatureGates))
	case cfg.FailSwapOn != nil:
		return forbidden("failSwapOn", strconv.FormatBool(*cfg.FailSwapOn))
	case cfg.MemorySwap.SwapBehavior != "":
		return forbidden("memorySwap.swapBehavior", cfg.MemorySwap.SwapBehavior)
	case len(cfg.SystemReserved) > 0 && kc.Spec.AutoSizingReserved != nil && *kc.Spec.AutoSizingReserved:
		return fieldError(kc.Name, kubeletConfigField+".systemReserved", "cannot be set together with spec.autoSizingReserved: true")
	case cfg.SystemReservedCgroup != "" && cfg.SystemCgroups != "" && cfg.SystemReservedCgroup != cfg.SystemCgroups:
		return fieldError(kc.Name, kubeletConfigField+".systemReservedCgroup", "%s must match systemCgroups (%s)", cfg.SystemReservedCgroup, cfg.SystemCgroups)
	}
	return nil
}

// ValidateForPool refuses a staticPodPath OpenShift refuses for pool: any on a control plane
// pool (its static pods are the control plane), anything but "" (no static pods) elsewhere.
func ValidateForPool(kc *mcfgv1.KubeletConfig, pool *mcfgv1.MachineConfigPool) error {
	if kc.Spec.KubeletConfig == nil || kc.Spec.KubeletConfig.Raw == nil {
		return nil
	}
	field := kubeletConfigField + ".staticPodPath"
	if IsControlPlanePool(pool) {
		// Present at all, even empty: the raw text is what counts, as in OpenShift.
		if strings.Contains(string(kc.Spec.KubeletConfig.Raw), `"staticPodPath"`) {
			return fieldError(kc.Name, field, "is not allowed to be set for control plane pool %q", pool.Name)
		}
		return nil
	}
	cfg, err := userConfig(kc)
	if err != nil {
		return err
	}
	if cfg.StaticPodPath != "" {
		return fieldError(kc.Name, field, "must be empty for pool %q, but contains: %s", pool.Name, cfg.StaticPodPath)
	}
	return nil
}

const masterNodeLabel = "node-role.kubernetes.io/master"

// IsControlPlanePool: the master and arbiter pools, and any pool selecting master nodes.
func IsControlPlanePool(pool *mcfgv1.MachineConfigPool) bool {
	if pool.Name == "master" || pool.Name == "arbiter" {
		return true
	}
	ns := pool.Spec.NodeSelector
	if ns == nil {
		return false
	}
	if _, ok := ns.MatchLabels[masterNodeLabel]; ok {
		return true
	}
	for _, expr := range ns.MatchExpressions {
		if expr.Key == masterNodeLabel && (expr.Operator == metav1.LabelSelectorOpExists || expr.Operator == metav1.LabelSelectorOpIn) {
			return true
		}
	}
	return false
}

// userConfig decodes spec.kubeletConfig; nil when it is absent.
func userConfig(kc *mcfgv1.KubeletConfig) (*kubeletv1beta1.KubeletConfiguration, error) {
	if kc.Spec.KubeletConfig == nil || kc.Spec.KubeletConfig.Raw == nil {
		return nil, nil
	}
	cfg, err := decode(kc.Spec.KubeletConfig.Raw)
	if err != nil {
		return nil, fieldError(kc.Name, kubeletConfigField, "is not a KubeletConfiguration: %v", err)
	}
	return cfg, nil
}

func featureGateList(gates map[string]bool) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(gates)) {
		parts = append(parts, name+"="+strconv.FormatBool(gates[name]))
	}
	return strings.Join(parts, ", ")
}
