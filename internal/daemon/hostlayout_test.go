package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// hostKubeconfig is what kubeadm leaves at /etc/kubernetes/kubelet.conf: the kubelet's kubeconfig.
const hostKubeconfig = `apiVersion: v1
kind: Config
clusters:
- cluster: {server: "https://10.0.0.1:6443", certificate-authority: /etc/kubernetes/pki/ca.crt}
  name: kubernetes
users:
- name: default-auth
  user: {client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem, client-key: /var/lib/kubelet/pki/kubelet-client-current.pem}
contexts:
- context: {cluster: kubernetes, user: default-auth}
  name: default-context
current-context: default-context
`

// TestKubeletConfOverHostKubeconfigIsRefused: a pool config that writes a KubeletConfiguration
// to /etc/kubernetes/kubelet.conf, on a host (kubeadm layout) whose file there is the kubelet's
// kubeconfig and no config of mco's wrote, is refused before any drain or write: Degraded
// naming the config, the path and why, a Warning event, the MachineConfigNode NodeDegraded.
// Once the host's file is no longer a kubeconfig, the same update goes through.
func TestKubeletConfOverHostKubeconfigIsRefused(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const pool, name = "kubeadm", "kubeadm-0"
	const kubeletConf = "/etc/kubernetes/kubelet.conf"
	r0 := customPool(t, ctx, pool, map[string]string{"/etc/base.conf": "base"})
	root := newRoot(t)
	provision(t, root, renderedConfig(t, ctx, r0))
	hostFile := filepath.Join(root, kubeletConf)
	if err := os.MkdirAll(filepath.Dir(hostFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hostFile, []byte(hostKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	createReadyNode(t, ctx, name, map[string]string{"node-role.kubernetes.io/" + pool: ""})
	ag := startAgent(t, name, root)
	awaitNode(t, ctx, name, "Done in "+r0, doneIn(r0))

	generated := `{"kind":"KubeletConfiguration","apiVersion":"kubelet.config.k8s.io/v1beta1","maxPods":250}` + "\n"
	createPoolConfig(t, ctx, pool, "99-"+pool+"-generated-kubelet", map[string]string{kubeletConf: generated, "/etc/kubelet-extra.conf": "x"})
	r1 := awaitPoolTarget(t, ctx, pool, r0)
	n := awaitNode(t, ctx, name, "Degraded by the refusal", func(a map[string]string) bool {
		return a[protocol.StateAnnotation] == string(protocol.NodeDegraded)
	})
	want := "cannot move to " + r1 + ": it writes a KubeletConfiguration to /etc/kubernetes/kubelet.conf, but this host's " +
		"/etc/kubernetes/kubelet.conf is the kubelet's kubeconfig (kubeadm layout: "
	if reason := n.Annotations[protocol.ReasonAnnotation]; !strings.HasPrefix(reason, want) ||
		!strings.Contains(reason, "would cut the node off the API server") || !strings.HasSuffix(reason, "; nothing was written") {
		t.Errorf("reason %q\nwant it to start %q, say why and that nothing was written", reason, want)
	}
	if ev := awaitEvent(t, ctx, name, "HostFileConflict"); ev.Type != "Warning" || !strings.Contains(ev.Message, r1) {
		t.Errorf("event %s %q", ev.Type, ev.Message)
	}
	m := awaitMCN(t, ctx, name, "NodeDegraded by the refusal", func(m *mcfgv1.MachineConfigNode) bool {
		c := meta.FindStatusCondition(m.Status.Conditions, string(mcfgv1.MachineConfigNodeNodeDegraded))
		return c != nil && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, kubeletConf)
	})
	if m.Status.ConfigVersion == nil || m.Status.ConfigVersion.Current != r0 {
		t.Errorf("MachineConfigNode claims a move: %+v", m.Status.ConfigVersion)
	}
	time.Sleep(2 * time.Second) // give a wrong agent time to go on
	n = node(t, ctx, name)
	if d := n.Annotations[protocol.DesiredDrainAnnotation]; d == protocol.DrainRequest(r1) || n.Spec.Unschedulable {
		t.Errorf("a refused update asked for a drain: %s unschedulable=%v", nodeSummary(n), n.Spec.Unschedulable)
	}
	if n.Annotations[protocol.CurrentConfigAnnotation] != r0 {
		t.Errorf("node moved on: %s", nodeSummary(n))
	}
	mustContain(t, root, kubeletConf, hostKubeconfig)
	for _, p := range []string{"/etc/kubelet-extra.conf", apply.JournalPath} {
		if _, err := os.Lstat(filepath.Join(root, p)); !os.IsNotExist(err) {
			t.Errorf("%s was written (err=%v)", p, err)
		}
	}
	if ag.reboots.Load() != 0 {
		t.Errorf("%d reboots", ag.reboots.Load())
	}

	// The host moves to OpenShift's layout (its kubeconfig elsewhere); the next pass applies.
	if err := os.WriteFile(hostFile, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	annotate(t, ctx, name, map[string]string{"test.mco.dev/poke": "layout-moved"})
	awaitNode(t, ctx, name, "Done in "+r1, doneIn(r1))
	mustContain(t, root, kubeletConf, generated)
	mustContain(t, root, "/etc/kubelet-extra.conf", "x")
}
