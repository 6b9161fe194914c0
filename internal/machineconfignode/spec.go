package machineconfignode

import (
	"fmt"
	"slices"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
)

// NotYetSet is OpenShift's placeholder for a config that is not known yet: the desired config
// of a node the node controller has not targeted, the current config of a node the agent has
// not reported. The CRD requires a valid name in both places, and this is one.
const NotYetSet = "not-yet-set"

// For is the MachineConfigNode node should have as managed by pool: named after the node,
// owned by it (so the garbage collector deletes it with the node), pointing at the node and its
// pool, desiring the node's desiredConfig, and carrying the node's hold and update priority
// (MirroredAnnotations). A node without a pool (none selects it, it is a
// Windows node, or two custom pools do) has none: For returns nil.
//
// A desiredConfig that is not a valid object name cannot be written into the spec (the CRD
// refuses it); the error names the node, the annotation and why.
func For(node *corev1.Node, pool string) (*mcfgv1.MachineConfigNode, error) {
	if pool == "" {
		return nil, nil
	}
	desired := node.Annotations[protocol.DesiredConfigAnnotation]
	if desired == "" {
		desired = NotYetSet
	}
	if errs := validation.IsDNS1123Subdomain(desired); len(errs) > 0 {
		return nil, fmt.Errorf("node %s: annotation %s=%q is not a MachineConfig name: %s",
			node.Name, protocol.DesiredConfigAnnotation, desired, strings.Join(errs, "; "))
	}
	return &mcfgv1.MachineConfigNode{
		ObjectMeta: metav1.ObjectMeta{Name: node.Name, OwnerReferences: []metav1.OwnerReference{ownerRef(node)}, Annotations: mirrored(node)},
		Spec: mcfgv1.MachineConfigNodeSpec{
			Node:          mcfgv1.MCOObjectReference{Name: node.Name},
			Pool:          mcfgv1.MCOObjectReference{Name: pool},
			ConfigVersion: mcfgv1.MachineConfigNodeSpecMachineConfigVersion{Desired: desired},
		},
	}, nil
}

// MirroredAnnotations are the Node's annotations of mco's own that a MachineConfigNode repeats,
// so `kubectl get mcn -o yaml` shows why a node is not updated or when it will be. OpenShift's
// MachineConfigNode has no field for them; annotations leave its schema as it is.
var MirroredAnnotations = []string{rolloutv1.HoldAnnotation, rolloutv1.UpdatePriorityAnnotation}

// mirrored is the MirroredAnnotations the node carries: the hold only while it holds the node
// ("true"), the priority as written. nil when none.
func mirrored(node *corev1.Node) map[string]string {
	var out map[string]string
	for _, k := range MirroredAnnotations {
		v, ok := node.Annotations[k]
		if !ok || (k == rolloutv1.HoldAnnotation && !rollout.Held(node)) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}

// ownerRef names the Node as owner. No blockOwnerDeletion: setting it needs update on
// nodes/finalizers where OwnerReferencesPermissionEnforcement runs, and nothing needs the
// MachineConfigNode to outlive a deleted Node's foreground deletion.
func ownerRef(node *corev1.Node) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}
}

// Reconciled returns have with want's spec, owner and mirrored annotations, and whether anything
// changed. Other owners, other annotations and everything outside the spec (status, labels)
// are kept; an owner reference to an
// earlier Node of the same name (deleted and registered again) is replaced.
func Reconciled(have, want *mcfgv1.MachineConfigNode) (*mcfgv1.MachineConfigNode, bool) {
	out := have.DeepCopy()
	out.Spec = want.Spec
	ref := want.OwnerReferences[0]
	out.OwnerReferences = slices.DeleteFunc(out.OwnerReferences, func(r metav1.OwnerReference) bool {
		return r.APIVersion == ref.APIVersion && r.Kind == ref.Kind && r.UID != ref.UID
	})
	if !slices.ContainsFunc(out.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == ref.UID }) {
		out.OwnerReferences = append(out.OwnerReferences, ref)
	}
	annotationsChanged := false
	for _, k := range MirroredAnnotations {
		v, want := want.Annotations[k]
		if old, ok := out.Annotations[k]; ok == want && old == v {
			continue
		}
		annotationsChanged = true
		if !want {
			delete(out.Annotations, k)
			continue
		}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[k] = v
	}
	changed := annotationsChanged || !equality.Semantic.DeepEqual(have.Spec, out.Spec) || !equality.Semantic.DeepEqual(have.OwnerReferences, out.OwnerReferences)
	return out, changed
}
