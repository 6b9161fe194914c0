package rollout

import (
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mco-dev/mco/internal/protocol"
)

// node builds a Ready, Done node on config cfg, created age seconds after a fixed epoch;
// options adjust it.
func node(name, cfg string, opts ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Labels:            map[string]string{protocol.WorkerRoleLabel: ""},
			CreationTimestamp: metav1.NewTime(time.Unix(1000, 0)),
			Annotations: map[string]string{
				protocol.CurrentConfigAnnotation: cfg,
				protocol.DesiredConfigAnnotation: cfg,
				protocol.StateAnnotation:         string(protocol.NodeDone),
			},
		},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
	for _, o := range opts {
		o(n)
	}
	return n
}

func created(sec int64) func(*corev1.Node) {
	return func(n *corev1.Node) { n.CreationTimestamp = metav1.NewTime(time.Unix(sec, 0)) }
}
func zone(z string) func(*corev1.Node) { return func(n *corev1.Node) { n.Labels[ZoneLabel] = z } }
func label(k, v string) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Labels[k] = v }
}
func desiring(cfg string) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Annotations[protocol.DesiredConfigAnnotation] = cfg }
}
func inState(s protocol.NodeState, reason string) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Annotations[protocol.StateAnnotation] = string(s)
		n.Annotations[protocol.ReasonAnnotation] = reason
	}
}

// drainedFor: mco cordoned the node and acknowledged its drain for cfg.
func drainedFor(cfg string) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Spec.Unschedulable = true
		n.Annotations[protocol.DesiredDrainAnnotation] = protocol.DrainRequest(cfg)
		n.Annotations[protocol.LastAppliedDrainAnnotation] = protocol.DrainRequest(cfg)
	}
}

// drainingFor: mco cordoned the node and is still evicting for cfg.
func drainingFor(cfg string) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Spec.Unschedulable = true
		n.Annotations[protocol.DesiredDrainAnnotation] = protocol.DrainRequest(cfg)
		n.Annotations[protocol.LastAppliedDrainAnnotation] = protocol.UncordonRequest("old")
		n.Annotations[protocol.DrainStartedAtAnnotation] = "2026-01-01T00:00:00Z"
	}
}

func notReady(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }
func cordoned(n *corev1.Node) { n.Spec.Unschedulable = true }
func unmanaged(n *corev1.Node) {
	delete(n.Annotations, protocol.CurrentConfigAnnotation)
	delete(n.Annotations, protocol.DesiredConfigAnnotation)
}
func noState(n *corev1.Node) { delete(n.Annotations, protocol.StateAnnotation) }
func noConditions(n *corev1.Node) {
	n.Status.Conditions = nil
}
func condition(t corev1.NodeConditionType, s corev1.ConditionStatus) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: t, Status: s})
	}
}

func pool(name, target string, opts ...func(*mcfgv1.MachineConfigPool)) *mcfgv1.MachineConfigPool {
	p := &mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 3},
		Spec: mcfgv1.MachineConfigPoolSpec{
			NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/" + name: ""}},
		},
	}
	p.Spec.Configuration.Name = target
	for _, o := range opts {
		o(p)
	}
	return p
}

func maxUnavail(v intstr.IntOrString) func(*mcfgv1.MachineConfigPool) {
	return func(p *mcfgv1.MachineConfigPool) { p.Spec.MaxUnavailable = &v }
}
func paused(p *mcfgv1.MachineConfigPool) { p.Spec.Paused = true }

func names(nodes []*corev1.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return out
}
