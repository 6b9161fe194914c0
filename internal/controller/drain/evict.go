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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	kubectldrain "k8s.io/kubectl/pkg/drain"

	"github.com/mco-dev/mco/internal/eviction"
)

// evictOnce makes one eviction pass over the node's pods and returns what is still in the way.
// It asks once per pod and never waits: the caller requeues. Which pods go is eviction.Of's
// decision (kubectl's drain filter as OpenShift runs it); pods already terminating are not asked
// again; pods whose eviction a PodDisruptionBudget refuses are reported with the budget.
func evictOnce(ctx context.Context, kube kubernetes.Interface, node string) ([]Obstacle, error) {
	pods, err := podsToEvict(ctx, kube, node)
	if err != nil {
		return nil, fmt.Errorf("listing pods of node %s: %w", node, err)
	}
	helper := &kubectldrain.Helper{
		Ctx:                ctx,
		Client:             kube,
		GracePeriodSeconds: -1, // each pod's own terminationGracePeriodSeconds
		Out:                io.Discard,
		ErrOut:             io.Discard,
	}
	var obstacles []Obstacle
	var failures []error
	budgets := &budgetIndex{kube: kube}
	for _, p := range pods {
		pod, key := p.pod, p.pod.Namespace+"/"+p.pod.Name
		if p.disposition == eviction.Terminating {
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
			obstacles = append(obstacles, Obstacle{Pod: key, Budgets: covering, Detail: budgetCause(err), Refused: true, uid: pod.UID})
		default:
			failures = append(failures, fmt.Errorf("evicting pod %s: %w", key, err))
		}
	}
	return obstacles, errors.Join(failures...)
}

// podToEvict is a pod the drain does not leave on the node: to evict, or already terminating.
type podToEvict struct {
	pod         corev1.Pod
	disposition eviction.Disposition
}

// podsToEvict lists the node's pods (all namespaces, field selector spec.nodeName, uncached) and
// keeps those eviction.Of does not leave on the node. A DaemonSet's pod stays unless its
// DaemonSet is gone, which only a lookup tells: any other failure of that lookup fails the pass
// before anything is evicted, as kubectl's drain does.
func podsToEvict(ctx context.Context, kube kubernetes.Interface, node string) ([]podToEvict, error) {
	list, err := kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
	})
	if err != nil {
		return nil, err
	}
	var pods []podToEvict
	for _, pod := range list.Items {
		gone := false
		if ds := eviction.DaemonSet(&pod); ds != "" {
			_, err := kube.AppsV1().DaemonSets(pod.Namespace).Get(ctx, ds, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				gone = true
			case err != nil:
				return nil, fmt.Errorf("pod %s/%s: looking up its DaemonSet %s: %w", pod.Namespace, pod.Name, ds, err)
			}
		}
		if d := eviction.Of(&pod, gone); d != eviction.Stays {
			pods = append(pods, podToEvict{pod: pod, disposition: d})
		}
	}
	return pods, nil
}

// budgetIndex names the PodDisruptionBudgets that select a pod (eviction.Covering, as the API
// server matches them). The eviction refusal does not name the budget in a structured field, so
// it is looked up. One budget typically refuses every replica it covers, so each namespace is
// listed once per eviction pass, not once per refused pod; a failed list is not remembered, the
// next pod tries again.
type budgetIndex struct {
	kube        kubernetes.Interface
	byNamespace map[string][]policyv1.PodDisruptionBudget
}

func (b *budgetIndex) covering(ctx context.Context, pod *corev1.Pod) ([]string, error) {
	budgets, err := b.namespace(ctx, pod.Namespace)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, pdb := range eviction.Covering(pod, budgets) {
		names = append(names, pdb.Namespace+"/"+pdb.Name)
	}
	return names, nil
}

func (b *budgetIndex) namespace(ctx context.Context, ns string) ([]policyv1.PodDisruptionBudget, error) {
	if budgets, ok := b.byNamespace[ns]; ok {
		return budgets, nil
	}
	pdbs, err := b.kube.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing PodDisruptionBudgets of %s: %w", ns, err)
	}
	if b.byNamespace == nil {
		b.byNamespace = map[string][]policyv1.PodDisruptionBudget{}
	}
	b.byNamespace[ns] = pdbs.Items
	return pdbs.Items, nil
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
