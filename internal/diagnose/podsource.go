package diagnose

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The labels of mco's pods (config/default): app.kubernetes.io/name=mco and a component.
const (
	appLabel       = "app.kubernetes.io/name=mco"
	componentLabel = "app.kubernetes.io/component"
)

// Pods reads the logs of mco's pods in Namespace through the pods/log API: the controller's,
// the server's and, per node, the agent's (the daemon DaemonSet's pod on that node); a
// container that restarted also gives its previous run's log.
type Pods struct {
	Client    kubernetes.Interface
	Namespace string
}

func (p Pods) String() string { return "pods in namespace " + p.Namespace + " (pods/log API)" }

func (p Pods) ComponentLogs(ctx context.Context, b *Bundle, since time.Duration) {
	for _, component := range []string{"controller", "server"} {
		pods, err := p.pods(ctx, component)
		if err != nil {
			b.Fail("logs of "+component, err)
			continue
		}
		for i := range pods {
			p.podLogs(ctx, b, &pods[i], "logs/"+component+"/"+pods[i].Name, since)
		}
	}
}

func (p Pods) AgentLogs(ctx context.Context, b *Bundle, nodes []string, since time.Duration) {
	pods, err := p.pods(ctx, "daemon")
	if err != nil {
		b.Fail("agent logs", err)
		return
	}
	for _, node := range nodes {
		i := slices.IndexFunc(pods, func(pod corev1.Pod) bool { return pod.Spec.NodeName == node })
		if i < 0 {
			b.Fail("nodes/"+node+"/agent.log", fmt.Errorf("no %s pod on node %s in namespace %s", "daemon", node, p.Namespace))
			continue
		}
		p.podLogs(ctx, b, &pods[i], "nodes/"+node+"/agent", since)
	}
}

func (p Pods) pods(ctx context.Context, component string) ([]corev1.Pod, error) {
	selector := appLabel + "," + componentLabel + "=" + component
	list, err := p.Client.CoreV1().Pods(p.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("no pod labelled %s in namespace %s", selector, p.Namespace)
	}
	return list.Items, nil
}

// podLogs adds each container's log of pod as base.log (base-<container>.log when it has
// several), and base[-<container>]-previous.log after a restart.
func (p Pods) podLogs(ctx context.Context, b *Bundle, pod *corev1.Pod, base string, since time.Duration) {
	seconds := int64(since.Seconds())
	for _, c := range pod.Spec.Containers {
		name := base
		if len(pod.Spec.Containers) > 1 {
			name += "-" + c.Name
		}
		p.addLog(ctx, b, pod.Name, name+".log", &corev1.PodLogOptions{Container: c.Name, SinceSeconds: &seconds})
		for _, s := range pod.Status.ContainerStatuses {
			if s.Name == c.Name && s.RestartCount > 0 {
				p.addLog(ctx, b, pod.Name, name+"-previous.log", &corev1.PodLogOptions{Container: c.Name, Previous: true})
			}
		}
	}
}

func (p Pods) addLog(ctx context.Context, b *Bundle, pod, file string, opts *corev1.PodLogOptions) {
	rc, err := p.Client.CoreV1().Pods(p.Namespace).GetLogs(pod, opts).Stream(ctx)
	if err != nil {
		b.Fail(file+" (pod "+pod+")", err)
		return
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		b.Fail(file+" (pod "+pod+")", err)
	}
	b.Add(file, capBytes(data, MaxLogBytes))
}
