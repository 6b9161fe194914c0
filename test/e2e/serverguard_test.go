package e2e

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
	"github.com/mco-dev/mco/test/clustertest"
)

// podsKeptOffTheServer: a real pod on a worker (mco's own image, its openssl) cannot open a
// connection to the Machine Config Server's ports, neither at the control-plane machine's
// address nor at api-int's; a host-network pod on the same worker can (so the refusal is the
// guard's, not a server that is down). When mco's agents are removed (their DaemonSet deleted),
// each takes its node's rules with it; installed again, they are back.
func podsKeptOffTheServer(t *testing.T, ctx context.Context, cl *clustertest.Cluster, workers []string) {
	ctx, cancel := context.WithTimeout(ctx, 8*time.Minute)
	defer cancel()
	kubectl := testenv.RequireTool(t, "kubectl")
	st, err := devcluster.LoadState(cl.Dir)
	if err != nil {
		t.Fatal(err)
	}
	masterIP := cl.NodeIP(t, ctx, "master-0")
	apiInt := st.Network().APIInt().String()
	targets := []string{
		net.JoinHostPort(masterIP, strconv.Itoa(protocol.ServerPort)),
		net.JoinHostPort(apiInt, strconv.Itoa(protocol.ServerPort)),
		net.JoinHostPort(masterIP, strconv.Itoa(protocol.ServerInsecurePort)),
	}
	worker := workers[0]

	// connect runs openssl s_client against target in a pod on worker; it says whether a TCP
	// connection opened (for the plain HTTP port, the TLS handshake that follows fails: what
	// counts is the connection) and what openssl printed.
	n := 0
	connect := func(t *testing.T, hostNetwork bool, target string) (bool, string) {
		t.Helper()
		n++
		name := fmt.Sprintf("server-guard-%d", n)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: corev1.PodSpec{
			NodeName: worker, HostNetwork: hostNetwork, RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "connect", Image: "ghcr.io/mco-dev/mco:latest", ImagePullPolicy: corev1.PullNever,
				Command: []string{"openssl", "s_client", "-connect", target, "-brief"}}},
		}}
		if err := cl.C.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := cl.C.Delete(context.Background(), pod); err != nil {
				t.Errorf("deleting pod %s: %v", name, err)
			}
		}()
		clustertest.Eventually(t, 2*time.Minute, "pod "+name+" to finish", func() bool {
			if err := cl.C.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
				return false
			}
			return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
		})
		logs, err := clustertest.Run(ctx, kubectl, "--kubeconfig", filepath.Join(cl.Dir, "kubeconfig"), "logs", "-n", "default", name)
		if err != nil {
			t.Fatalf("kubectl logs %s: %v", name, err)
		}
		out := string(logs)
		refused := strings.Contains(out, "errno=111") || strings.Contains(out, "Connection refused")
		opened := strings.Contains(out, "CONNECTION ESTABLISHED") || strings.Contains(out, "CONNECTED(") ||
			strings.Contains(out, "wrong version number") || strings.Contains(out, "packet length too long") || strings.Contains(out, "record layer failure")
		if refused == opened {
			t.Fatalf("pod %s (hostNetwork %v) to %s: cannot tell whether it connected:\n%s", name, hostNetwork, target, out)
		}
		return opened, out
	}

	refusedEverywhere := func(t *testing.T) {
		for _, target := range targets {
			if opened, out := connect(t, false, target); opened {
				t.Errorf("a pod on %s opened a connection to the Machine Config Server at %s:\n%s", worker, target, out)
			}
		}
	}
	t.Run("pods refused", refusedEverywhere)
	if opened, out := connect(t, true, targets[0]); !opened {
		t.Fatalf("a host-network pod on %s could not reach the server at %s (so the pods' refusal proves nothing):\n%s", worker, targets[0], out)
	}

	// Uninstalled: the agents' DaemonSet deleted. Each agent, stopping, sees it gone and removes
	// its node's chains.
	out, err := clustertest.Run(ctx, kubectl, "--kubeconfig", filepath.Join(cl.Dir, "kubeconfig"), "delete", "daemonset",
		"-n", "openshift-machine-config-operator", "mco-daemon", "--wait=true")
	if err != nil {
		t.Fatalf("kubectl delete daemonset mco-daemon: %v\n%s", err, out)
	}
	clustertest.Eventually(t, 3*time.Minute, "no agent pod left", func() bool {
		var pods corev1.PodList
		err := cl.C.List(ctx, &pods, client.InNamespace("openshift-machine-config-operator"), client.MatchingLabels{"app.kubernetes.io/component": "daemon"})
		return err == nil && len(pods.Items) == 0
	})
	t.Run("pods reach the server once mco's agents are gone", func(t *testing.T) {
		if opened, out := connect(t, false, targets[0]); !opened {
			t.Errorf("the rules outlived the agents: a pod on %s is still refused at %s:\n%s", worker, targets[0], out)
		}
	})

	// Installed again, as README's install does.
	out, err = clustertest.Run(ctx, kubectl, "--kubeconfig", filepath.Join(cl.Dir, "kubeconfig"), "apply", "--server-side", "--force-conflicts",
		"-k", filepath.Join(cl.Dir, "install"))
	if err != nil {
		t.Fatalf("reinstalling: %v\n%s", err, out)
	}
	out, err = clustertest.Run(ctx, kubectl, "--kubeconfig", filepath.Join(cl.Dir, "kubeconfig"), "rollout", "status",
		"-n", "openshift-machine-config-operator", "daemonset/mco-daemon", "--timeout=4m")
	if err != nil {
		t.Fatalf("the agents after reinstalling: %v\n%s", err, out)
	}
	t.Run("pods refused again after reinstalling", refusedEverywhere)
}
