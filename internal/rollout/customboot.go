package rollout

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/protocol"
)

// A machine can boot straight into a custom pool (its pointer config names /config/infra), but
// its kubelet registers the Node with the labels it was given, typically only the worker role.
// Left alone, worker would count the node and move it to worker's config. So, as OpenShift's
// node controller does, the node gets the custom pool's node-selector labels once, when it
// first shows up with the rendered config it booted into (the firstPivotConfig annotation the
// server's node-annotations file seeds).

// FirstBootPending returns the rendered config a node first booted into while its custom-pool
// labels have not been settled: the node has firstPivotConfig and no
// customPoolLabelsApplied. Whether that config is a custom pool's is for the caller to find
// out (OwningPool of the rendered MachineConfig).
func FirstBootPending(node *corev1.Node) (string, bool) {
	if _, settled := node.Annotations[protocol.CustomPoolLabelsAppliedAnnotation]; settled {
		return "", false
	}
	rendered := node.Annotations[protocol.FirstPivotConfigAnnotation]
	return rendered, rendered != ""
}

// OwningPool is the pool a rendered MachineConfig belongs to: its MachineConfigPool owner
// reference, as the render controller sets it; "" when it has none.
func OwningPool(mc *mcfgv1.MachineConfig) string {
	for _, ref := range mc.OwnerReferences {
		if ref.Kind == "MachineConfigPool" && strings.HasPrefix(ref.APIVersion, mcfgv1.GroupName+"/") {
			return ref.Name
		}
	}
	return ""
}

// CustomBoot is the decision about a node pending its first-boot labels.
type CustomBoot struct {
	// Pool is the custom pool the node booted into; "" when there is nothing to do (it
	// booted into a built-in pool, or its pool no longer exists).
	Pool string
	// Labels are the labels to add; empty when the node has them already, in which case only
	// the annotation is written.
	Labels map[string]string
	// Refused, when set, is why the labels are not applied. The node is then held out of every
	// pool (neither counted nor targeted, like a node in two custom pools) until an admin
	// labels it or marks it settled, so no pool moves it to another pool's config meanwhile.
	Refused string
}

// DecideCustomBoot decides what a node that first booted into bootedPool's rendered config
// needs. The labels are the pool's nodeSelector matchLabels, plus, where matchLabels does not
// set the key, an In expression with exactly one value (key=value) and Exists (key=""); other
// expressions give no label. They are refused when they would replace a label the node has
// with another value (the kubelet or an admin set it), or when the node would not then belong
// to bootedPool alone: a second custom pool (which leaves a node unmanaged in OpenShift too),
// master (custom pools on control-plane nodes are unsupported), or a selector the derived
// labels cannot satisfy (NotIn, DoesNotExist, In with several values).
func DecideCustomBoot(node *corev1.Node, bootedPool string, pools []*mcfgv1.MachineConfigPool) CustomBoot {
	if bootedPool == "" || builtIn(bootedPool) || node.Labels[OSLabel] == "windows" {
		return CustomBoot{}
	}
	i := slices.IndexFunc(pools, func(p *mcfgv1.MachineConfigPool) bool { return p.Name == bootedPool })
	if i < 0 {
		return CustomBoot{}
	}
	pool := pools[i]
	d := CustomBoot{Pool: bootedPool}
	want := selectorLabels(pool.Spec.NodeSelector)
	if len(want) == 0 {
		d.Refused = fmt.Sprintf("node %s booted into pool %s, but the pool's nodeSelector gives no label to apply (only matchLabels, In with one value and Exists do)", node.Name, bootedPool)
		return d
	}
	var conflicts []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if have, ok := node.Labels[k]; ok && have != want[k] {
			conflicts = append(conflicts, fmt.Sprintf("%s=%q (the node has %q)", k, want[k], have))
		}
	}
	if len(conflicts) > 0 {
		d.Refused = fmt.Sprintf("node %s booted into pool %s, but applying the pool's labels would replace the node's own: %s",
			node.Name, bootedPool, strings.Join(conflicts, ", "))
		return d
	}
	labelled := node.DeepCopy()
	if labelled.Labels == nil {
		labelled.Labels = map[string]string{}
	}
	maps.Copy(labelled.Labels, want)
	switch primary, err := PrimaryPool(labelled, pools); {
	case err != nil:
		d.Refused = fmt.Sprintf("node %s booted into pool %s, but with the pool's labels %s", node.Name, bootedPool, err)
		return d
	case primary != bootedPool:
		d.Refused = fmt.Sprintf("node %s booted into pool %s, but with the pool's labels it would belong to %s", node.Name, bootedPool, poolOrNone(primary))
		return d
	}
	d.Labels = map[string]string{}
	for k, v := range want {
		if have, ok := node.Labels[k]; !ok || have != v {
			d.Labels[k] = v
		}
	}
	return d
}

func poolOrNone(pool string) string {
	if pool == "" {
		return "no pool (its nodeSelector needs more than the labels derived from it)"
	}
	return "pool " + pool
}

// selectorLabels are the labels that put a node in a selector's pool, as far as they can be
// derived: matchLabels, then In with exactly one value (key=value) and Exists (key="") for
// keys matchLabels does not set. NotIn, DoesNotExist and In with several values give none.
func selectorLabels(sel *metav1.LabelSelector) map[string]string {
	out := map[string]string{}
	if sel == nil {
		return out
	}
	maps.Copy(out, sel.MatchLabels)
	for _, expr := range sel.MatchExpressions {
		if _, set := out[expr.Key]; set {
			continue
		}
		switch {
		case expr.Operator == metav1.LabelSelectorOpIn && len(expr.Values) == 1:
			out[expr.Key] = expr.Values[0]
		case expr.Operator == metav1.LabelSelectorOpExists:
			out[expr.Key] = ""
		}
	}
	return out
}
