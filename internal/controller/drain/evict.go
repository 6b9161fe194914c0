package drain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	kubectldrain "k8s.io/kubectl/pkg/drain"
)

// evictOnce makes one eviction pass over the node's pods and returns what is still in the way.
// It asks once per pod and never waits: the caller requeues. Pods already terminating are not
// asked again; pods whose eviction a PodDisruptionBudget refuses are reported with the budget.
func evictOnce(ctx context.Context, kube kubernetes.Interface, node string) ([]Obstacle, error) {
	helper := &kubectldrain.Helper{
		Ctx:                 ctx,
		Client:              kube,
		Force:               true, // pods without a controller go too: the node is about to change under them
		IgnoreAllDaemonSets: true, // their controller would put them right back
		DeleteEmptyDirData:  true, // emptyDir dies with the pod anyway
		GracePeriodSeconds:  -1,   // each pod's own terminationGracePeriodSeconds
		Out:                 io.Discard,
		ErrOut:              io.Discard,
	}
	list, errs := helper.GetPodsForDeletion(node)
	if len(errs) > 0 {
		return nil, fmt.Errorf("listing pods of node %s: %w", node, errors.Join(errs...))
	}
	var obstacles []Obstacle
	var failures []error
	budgets := &budgetIndex{kube: kube}
	for _, pod := range list.Pods() {
		key := pod.Namespace + "/" + pod.Name
		if pod.DeletionTimestamp != nil {
			obstacles = append(obstacles, Obstacle{Pod: key})
			continue
		}
		err := helper.EvictPod(pod, policyv1.SchemeGroupVersion)
		switch {
		case err == nil:
			// Accepted: the pod terminates in its grace period, or is already gone if that is 0.
			// The next pass sees which.
			obstacles = append(obstacles, Obstacle{Pod: key})
		case apierrors.IsNotFound(err):
		case apierrors.IsTooManyRequests(err):
			covering, lookupErr := budgets.covering(ctx, &pod)
			if lookupErr != nil {
				failures = append(failures, lookupErr)
			}
			obstacles = append(obstacles, Obstacle{Pod: key, Budgets: covering, Detail: budgetCause(err)})
		default:
			failures = append(failures, fmt.Errorf("evicting pod %s: %w", key, err))
		}
	}
	return obstacles, errors.Join(failures...)
}

// budgetIndex names the PodDisruptionBudgets whose selector matches a pod. The eviction refusal
// does not name the budget in a structured field, so it is looked up. One budget typically
// refuses every replica it covers, so each namespace is listed once per eviction pass, not once
// per refused pod; a failed list is not remembered, the next pod tries again.
type budgetIndex struct {
	kube        kubernetes.Interface
	byNamespace map[string][]budget
}

type budget struct {
	name     string
	selector labels.Selector
}

func (b *budgetIndex) covering(ctx context.Context, pod *corev1.Pod) ([]string, error) {
	budgets, err := b.namespace(ctx, pod.Namespace)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, pdb := range budgets {
		if pdb.selector.Matches(labels.Set(pod.Labels)) {
			names = append(names, pdb.name)
		}
	}
	return names, nil
}

// namespace lists the budgets of ns that can select anything; an invalid or empty selector
// covers no pod.
func (b *budgetIndex) namespace(ctx context.Context, ns string) ([]budget, error) {
	if budgets, ok := b.byNamespace[ns]; ok {
		return budgets, nil
	}
	pdbs, err := b.kube.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing PodDisruptionBudgets of %s: %w", ns, err)
	}
	var budgets []budget
	for _, pdb := range pdbs.Items {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() {
			continue
		}
		budgets = append(budgets, budget{name: pdb.Namespace + "/" + pdb.Name, selector: sel})
	}
	if b.byNamespace == nil {
		b.byNamespace = map[string][]budget{}
	}
	b.byNamespace[ns] = budgets
	return budgets, nil
}

// budgetCause is the API server's explanation of a refused eviction ("The disruption budget x
// needs 2 healthy pods and has 2 currently"), if it gave one.
func budgetCause(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return ""
	}
	var causes []string
	for _, c := range status.Status().Details.Causes {
		if c.Type == policyv1.DisruptionBudgetCause {
			causes = append(causes, c.Message)
		}
	}
	return strings.Join(causes, "; ")
}
