package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubectl/pkg/util/podutils"
	"sigs.k8s.io/controller-runtime/pkg/client"

	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/rollout"
	"github.com/mco-dev/mco/test/clustertest"
)

// handEdit is the line a hand edit added to worker-1's /etc/chrony.conf.
const handEdit = "server 192.0.2.1 iburst # added by hand on worker-1"

// TestKubeadmLayoutInstall installs mco on a cluster built the way kubeadm users have theirs:
// machines of a distribution image with what kubeadm join leaves (no Ignition, nothing of mco),
// master-0 marked as kubeadm marks a control plane, workers with no role label; then mco from
// config/kubeadm, README's steps run as written. Its pods run, its built-in pools select every node and render,
// and nothing rebooted or rewrote the distribution's files.
func TestKubeadmLayoutInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: needs the dev cluster, real machines and the real binaries")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cl := clustertest.StartWith(t, ctx, clustertest.Options{Nodes: 2, Layout: devcluster.LayoutKubeadm, NoInstall: true})
	machines := []string{devcluster.ControlPlaneMachine, "worker-0", "worker-1"}

	t.Run("nodes are kubeadm's: real kubelet and containerd, role only on the control plane", func(t *testing.T) {
		var nodes corev1.NodeList
		if err := cl.C.List(ctx, &nodes); err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != len(machines) {
			t.Fatalf("%d Nodes, want %v", len(nodes.Items), machines)
		}
		for i := range nodes.Items {
			n := &nodes.Items[i]
			info := n.Status.NodeInfo
			if info.KubeletVersion != "v1.36.3" || !strings.HasPrefix(info.ContainerRuntimeVersion, "containerd://") || !rollout.Ready(n) {
				t.Errorf("%s: kubelet %q, runtime %q, Ready %v", n.Name, info.KubeletVersion, info.ContainerRuntimeVersion, rollout.Ready(n))
			}
			var roles []string
			for k := range n.Labels {
				if strings.HasPrefix(k, "node-role.kubernetes.io/") {
					roles = append(roles, k)
				}
			}
			controlPlane := n.Name == devcluster.ControlPlaneMachine
			if controlPlane && (len(roles) != 1 || roles[0] != protocol.ControlPlaneRoleLabel) || !controlPlane && len(roles) != 0 {
				t.Errorf("%s: role labels %v; kubeadm labels only its control plane, node-role.kubernetes.io/control-plane", n.Name, roles)
			}
			tainted := false
			for _, taint := range n.Spec.Taints {
				tainted = tainted || taint.Key == protocol.ControlPlaneRoleLabel && taint.Effect == corev1.TaintEffectNoSchedule
			}
			if tainted != controlPlane {
				t.Errorf("%s: control-plane NoSchedule taint %v", n.Name, tainted)
			}
		}
		for _, m := range machines {
			// The distribution boots clean: no unit of the image failed.
			if got := cl.InMachine(t, ctx, m, "sh", "-c", "systemctl is-system-running || true"); got != "running" {
				t.Errorf("%s: systemd is %q (systemctl --failed inside)", m, got)
			}
			// kubeadm's unit: the packages' kubelet.service, 10-kubeadm.conf's flags, the
			// admin's --config-dir; joined by CSR, so the kubelet wrote its own kubeconfig.
			cmdline := cl.InMachine(t, ctx, m, "sh", "-c", `tr '\0' ' ' < /proc/$(pgrep -xo kubelet)/cmdline`)
			for _, flag := range []string{"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf", "--kubeconfig=/etc/kubernetes/kubelet.conf",
				"--config=/var/lib/kubelet/config.yaml", "--config-dir=/etc/kubernetes/kubelet.conf.d"} {
				if !strings.Contains(cmdline, flag) {
					t.Errorf("%s: kubelet %q lacks %s", m, cmdline, flag)
				}
			}
			// kubeadm join deleted the bootstrap kubeconfig once the kubelet wrote its own.
			if got := cl.InMachine(t, ctx, m, "sh", "-c", "test -s /etc/kubernetes/kubelet.conf && ls -A /etc/kubernetes/kubelet.conf.d /etc/containerd/certs.d; "+
				"ls -d /etc/kubernetes/bootstrap-kubelet.conf /etc/machine-config-daemon /usr/local/bin/mco /etc/systemd/system/"+devcluster.FirstBootUnit+" 2>/dev/null; true"); got != "/etc/containerd/certs.d:\n\n/etc/kubernetes/kubelet.conf.d:" {
				t.Errorf("%s: want kubelet.conf written, no bootstrap kubeconfig left, empty drop-in directories and nothing of mco; got %q", m, got)
			}
		}
	})

	// README's "Install on a kubeadm cluster", as written: the settings `mco dev status`
	// prints; the dev cluster's history (worker-1's chrony.conf edited by hand, the admin's
	// MachineConfig for every worker's in my-machineconfigs/, applied before mco); the image
	// loaded again, then the install.
	s := readmeSession(t, cl, "kubeadm")
	s.Run(t, "kubeadm-dev-settings")
	if b := s.Block(t, "kubeadm-dev-history"); !strings.Contains(b.Script, handEdit) {
		t.Fatalf("%s no longer adds %q to worker-1's chrony.conf, which this test checks for", b.Where(), handEdit)
	}
	s.Run(t, "kubeadm-dev-history")
	stamps := map[string]string{}
	for _, m := range machines {
		stamps[m] = cl.InMachine(t, ctx, m, "stat", "-c", "%y %i", "/etc/chrony.conf")
	}
	for _, id := range []string{"dev-load-image", "kubeadm-install"} {
		s.Run(t, id)
	}

	t.Run("controller, server and agents are Ready", func(t *testing.T) {
		var pods corev1.PodList
		if err := cl.C.List(ctx, &pods, client.InNamespace(devcluster.ServerNamespace), client.MatchingLabels{"app.kubernetes.io/name": "mco"}); err != nil {
			t.Fatal(err)
		}
		ready := map[string][]string{} // component → nodes of its Ready pods
		for i := range pods.Items {
			p := &pods.Items[i]
			if podutils.IsPodReady(p) {
				comp := p.Labels["app.kubernetes.io/component"]
				ready[comp] = append(ready[comp], p.Spec.NodeName)
			}
		}
		if len(ready["controller"]) != 1 || len(ready["server"]) != 1 || ready["server"][0] != devcluster.ControlPlaneMachine || len(ready["daemon"]) != len(machines) {
			t.Errorf("Ready pods by component and node: %v; want a controller, the server on %s and an agent on each of %v", ready, devcluster.ControlPlaneMachine, machines)
		}
	})

	t.Run("each node is in exactly one built-in pool: master-0 in master, the workers in worker", func(t *testing.T) {
		var pools mcfgv1.MachineConfigPoolList
		if err := cl.C.List(ctx, &pools); err != nil {
			t.Fatal(err)
		}
		for _, m := range machines {
			node := cl.Node(t, ctx, m)
			var in []string
			for i := range pools.Items {
				if rollout.Selects(&pools.Items[i], node) {
					in = append(in, pools.Items[i].Name)
				}
			}
			want := protocol.WorkerPool
			if m == devcluster.ControlPlaneMachine {
				want = protocol.MasterPool
			}
			if len(in) != 1 || in[0] != want {
				t.Errorf("%s is selected by %v, want [%s]", m, in, want)
			}
		}
	})

	t.Run("the built-in pools render from their empty bases, not Degraded", func(t *testing.T) {
		for _, name := range []string{protocol.MasterPool, protocol.WorkerPool} {
			clustertest.Eventually(t, time.Minute, "pool "+name+" rendered", func() bool {
				var p mcfgv1.MachineConfigPool
				return cl.C.Get(ctx, client.ObjectKey{Name: name}, &p) == nil && p.Spec.Configuration.Name != "" &&
					!poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolRenderDegraded)
			})
		}
	})

	t.Run("nothing rebooted, the distribution's files are its own", func(t *testing.T) {
		for _, m := range machines {
			if boots := cl.Boots(t, m); boots != 1 {
				t.Errorf("%s booted %d times", m, boots)
			}
			want := devcluster.DistroChronyConf
			if m == "worker-1" {
				want += handEdit + "\n"
			}
			if got := cl.NodeFile(ctx, m, "/etc/chrony.conf"); got != want {
				t.Errorf("%s: /etc/chrony.conf = %q, want %q", m, got, want)
			}
		}
	})

	kubeadmAdoption(t, ctx, cl, s, stamps)
	if t.Failed() {
		return // the steps below start from worker-1 adopted
	}
	kubeadmKubeletConfig(t, ctx, cl)
	kubeadmImageMirror(t, ctx, cl)
	kubeadmPinRefused(t, ctx, cl, kubeadmWorkers)
	kubeadmRevert(t, ctx, cl, s)
}
