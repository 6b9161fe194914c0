package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/adoption"
	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/test/clustertest"
	"github.com/mco-dev/mco/test/doctest"
)

// The kubeadm layout's steps after install (TestKubeadmLayoutInstall): adoption, a
// KubeletConfig, an image mirror, and a revert, on the one cluster.

var kubeadmWorkers = []string{"worker-0", "worker-1"}

// poolTarget is the rendered config a pool targets now.
func poolTarget(t *testing.T, ctx context.Context, cl *clustertest.Cluster, pool string) string {
	t.Helper()
	var p mcfgv1.MachineConfigPool
	if err := cl.C.Get(ctx, client.ObjectKey{Name: pool}, &p); err != nil {
		t.Fatal(err)
	}
	return p.Spec.Configuration.Name
}

// awaitDoneIn waits until every machine is Done in its pool's target, which must differ from
// previous (""), and returns the worker pool's target.
func awaitWorkersDone(t *testing.T, ctx context.Context, cl *clustertest.Cluster, previous string, timeout time.Duration) string {
	t.Helper()
	var target string
	err := clustertest.WaitFor(ctx, timeout, func() bool {
		var p mcfgv1.MachineConfigPool
		if cl.C.Get(ctx, client.ObjectKey{Name: protocol.WorkerPool}, &p) != nil {
			return false
		}
		target = p.Spec.Configuration.Name
		if target == "" || target == previous {
			return false
		}
		for _, m := range kubeadmWorkers {
			var n corev1.Node
			if cl.C.Get(ctx, client.ObjectKey{Name: m}, &n) != nil || !doneIn(&n, target) {
				return false
			}
		}
		return true
	})
	if err != nil {
		var states []string
		for _, m := range kubeadmWorkers {
			a := cl.Node(t, ctx, m).Annotations
			states = append(states, fmt.Sprintf("%s current=%s desired=%s state=%s reason=%q", m, a[protocol.CurrentConfigAnnotation],
				a[protocol.DesiredConfigAnnotation], a[protocol.StateAnnotation], a[protocol.ReasonAnnotation]))
		}
		t.Fatalf("%v waiting for the workers Done in the worker pool's target after %s (now %q):\n%s", err, previous, target, strings.Join(states, "\n"))
	}
	return target
}

func doneIn(n *corev1.Node, config string) bool {
	a := n.Annotations
	return a[protocol.CurrentConfigAnnotation] == config && a[protocol.DesiredConfigAnnotation] == config && a[protocol.StateAnnotation] == string(protocol.NodeDone)
}

// kubeadmAdoption: nodes whose host already is in their pool's config are adopted without a
// reboot or a change to their files; worker-1, whose chrony.conf differs, waits for the admin
// with the diff shown, then takes the update as planned once approved.
func kubeadmAdoption(t *testing.T, ctx context.Context, cl *clustertest.Cluster, s *doctest.Session, stamps map[string]string) {
	t.Run("nodes already in their pool's config are adopted as they are", func(t *testing.T) {
		for _, m := range []string{devcluster.ControlPlaneMachine, "worker-0"} {
			pool := protocol.WorkerPool
			if m == devcluster.ControlPlaneMachine {
				pool = protocol.MasterPool
			}
			clustertest.Eventually(t, 2*time.Minute, m+" adopted", func() bool {
				target := poolTarget(t, ctx, cl, pool)
				return target != "" && doneIn(cl.Node(t, ctx, m), target)
			})
			if boots := cl.Boots(t, m); boots != 1 {
				t.Errorf("%s booted %d times", m, boots)
			}
			if got := cl.InMachine(t, ctx, m, "stat", "-c", "%y %i", "/etc/chrony.conf"); got != stamps[m] {
				t.Errorf("%s: /etc/chrony.conf was rewritten (%s, was %s)", m, got, stamps[m])
			}
			if n := cl.Node(t, ctx, m); n.Spec.Unschedulable || n.Annotations[protocol.DesiredDrainAnnotation] != "" {
				t.Errorf("%s was drained to be adopted", m)
			}
		}
	})

	t.Run("worker-1 waits for the admin, with what adopting would write", func(t *testing.T) {
		var plan adoption.Plan
		clustertest.Eventually(t, 2*time.Minute, "worker-1 waiting for adoption", func() bool {
			n := cl.Node(t, ctx, "worker-1")
			if n.Annotations[protocol.AdoptionAnnotation] != protocol.AdoptionPending {
				return false
			}
			p, err := adoption.Decode(n.Annotations[protocol.AdoptionPlanAnnotation])
			plan = p
			return err == nil && p.Target == poolTarget(t, ctx, cl, protocol.WorkerPool)
		})
		if len(plan.Files) != 1 || plan.Files[0].Path != "/etc/chrony.conf" || !strings.Contains(plan.Files[0].Diff, "-"+handEdit) || !plan.Reboot {
			t.Errorf("plan %+v; want chrony.conf's diff removing the hand edit, and a reboot", plan)
		}
		var pool mcfgv1.MachineConfigPool
		if err := cl.C.Get(ctx, client.ObjectKey{Name: protocol.WorkerPool}, &pool); err != nil {
			t.Fatal(err)
		}
		if c := poolcondition.Get(&pool.Status, "NodesAwaitingAdoption"); c == nil || c.Status != corev1.ConditionTrue || !strings.Contains(c.Message, "worker-1") {
			t.Errorf("worker pool's NodesAwaitingAdoption: %+v", c)
		}
		// README's "Adopting the nodes": mco status, mco plan --pool worker (exit 0: nothing
		// is approved yet) and mco explain; withdrawing an approval never given changes nothing.
		out := s.Run(t, "adopt-inspect")
		if !strings.Contains(out, "-"+handEdit) || !strings.Contains(out, "worker-1") {
			t.Errorf("mco plan --pool worker does not show worker-1's diff:\n%s", out)
		}
		if !strings.Contains(out, "mco adopt worker-1") {
			t.Errorf("mco explain node/worker-1 does not say how to approve:\n%s", out)
		}
		s.Run(t, "adopt-withdraw")
		time.Sleep(3 * time.Second) // a wrong agent or controller would have started by now
		n := cl.Node(t, ctx, "worker-1")
		if n.Annotations[protocol.CurrentConfigAnnotation] != "" || n.Annotations[protocol.DesiredConfigAnnotation] != "" || n.Spec.Unschedulable {
			t.Fatalf("worker-1 was adopted without approval: %v unschedulable=%v", n.Annotations, n.Spec.Unschedulable)
		}
		if got := cl.NodeFile(ctx, "worker-1", "/etc/chrony.conf"); got != devcluster.DistroChronyConf+handEdit+"\n" {
			t.Errorf("worker-1's chrony.conf changed before approval: %q", got)
		}
	})

	t.Run("approved, worker-1 is updated as planned", func(t *testing.T) {
		s.Run(t, "adopt-approve")
		target := poolTarget(t, ctx, cl, protocol.WorkerPool)
		clustertest.Eventually(t, 3*time.Minute, "worker-1 Done in "+target, func() bool { return doneIn(cl.Node(t, ctx, "worker-1"), target) })
		if boots := cl.Boots(t, "worker-1"); boots != 2 {
			t.Errorf("worker-1 booted %d times, want the planned reboot once", boots)
		}
		if got := cl.NodeFile(ctx, "worker-1", "/etc/chrony.conf"); got != devcluster.DistroChronyConf {
			t.Errorf("worker-1's chrony.conf %q", got)
		}
		if n := cl.Node(t, ctx, "worker-1"); n.Annotations[protocol.AdoptionAnnotation] != "" || n.Spec.Unschedulable {
			t.Errorf("worker-1 adopted but: adoption=%q unschedulable=%v", n.Annotations[protocol.AdoptionAnnotation], n.Spec.Unschedulable)
		}
	})
}

// kubeadmKubeletConfig: a KubeletConfig's maxPods takes effect in each worker's running kubelet
// (the capacity it reports), with a kubelet restart and no reboot or drain.
func kubeadmKubeletConfig(t *testing.T, ctx context.Context, cl *clustertest.Cluster) {
	t.Run("a KubeletConfig is in effect in each worker's kubelet, no reboot", func(t *testing.T) {
		before := poolTarget(t, ctx, cl, protocol.WorkerPool)
		boots := map[string]int{}
		for _, m := range kubeadmWorkers {
			boots[m] = cl.Boots(t, m)
		}
		kc := &mcfgv1.KubeletConfig{
			ObjectMeta: metav1.ObjectMeta{Name: "max-pods"},
			Spec: mcfgv1.KubeletConfigSpec{
				MachineConfigPoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pools.operator.machineconfiguration.openshift.io/worker": ""}},
				KubeletConfig:             &runtime.RawExtension{Raw: []byte(`{"maxPods":42}`)},
			},
		}
		if err := cl.C.Create(ctx, kc); err != nil {
			t.Fatal(err)
		}
		target := awaitWorkersDone(t, ctx, cl, before, 3*time.Minute)
		for _, m := range kubeadmWorkers {
			// Done once the running kubelet has it (the agent checks); the Node shows it with
			// the restarted kubelet's next status report.
			var n *corev1.Node
			var got resource.Quantity
			if err := clustertest.WaitFor(ctx, 30*time.Second, func() bool {
				n = cl.Node(t, ctx, m)
				got = n.Status.Capacity[corev1.ResourcePods]
				return got.Cmp(resource.MustParse("42")) == 0
			}); err != nil {
				t.Errorf("%s: the kubelet reports %s pods of capacity, want 42 (%v)", m, got.String(), err)
			}
			if b := cl.Boots(t, m); b != boots[m] {
				t.Errorf("%s rebooted for a KubeletConfig (%d boots, was %d)", m, b, boots[m])
			}
			if n.Annotations[protocol.LastAppliedDrainAnnotation] == protocol.DrainRequest(target) {
				t.Errorf("%s was drained for a kubelet restart", m)
			}
		}
	})
}

// kubeadmImageMirror: an ImageDigestMirrorSet becomes containerd's hosts.toml on the workers
// (no reboot, no drain), and a pod's pull by digest from a registry nobody can reach is served
// by the mirror on this host.
func kubeadmImageMirror(t *testing.T, ctx context.Context, cl *clustertest.Cluster) {
	t.Run("an image mirror is used by a real pull, no reboot or drain", func(t *testing.T) {
		mirror := clustertest.StartImageMirror(t, cl, "mco/pause")
		before := poolTarget(t, ctx, cl, protocol.WorkerPool)
		boots := map[string]int{}
		for _, m := range kubeadmWorkers {
			boots[m] = cl.Boots(t, m)
		}
		// The source is a loopback address where nothing listens: were the mirror not used,
		// containerd's fallback to the source would be refused in the machine, and no name
		// lookup or packet for it could leave it (a name like example.invalid would be asked
		// of the host's resolver).
		const sourceHost = "127.0.0.9:9"
		const source = sourceHost + "/mco/pause"
		for _, obj := range []client.Object{
			&configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
				Spec: configv1.ImageSpec{RegistrySources: configv1.RegistrySources{InsecureRegistries: []string{mirror.Host}}}},
			&configv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "e2e-mirror"},
				Spec: configv1.ImageDigestMirrorSetSpec{ImageDigestMirrors: []configv1.ImageDigestMirrors{{
					Source: source, Mirrors: []configv1.ImageMirror{configv1.ImageMirror(mirror.Host + "/" + mirror.Repo)}}}}},
		} {
			if err := cl.C.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
		target := awaitWorkersDone(t, ctx, cl, before, 3*time.Minute)
		for _, m := range kubeadmWorkers {
			if b := cl.Boots(t, m); b != boots[m] {
				t.Errorf("%s rebooted for a mirror (%d boots, was %d)", m, b, boots[m])
			}
			if cl.Node(t, ctx, m).Annotations[protocol.LastAppliedDrainAnnotation] == protocol.DrainRequest(target) {
				t.Errorf("%s was drained for a mirror", m)
			}
		}
		if got := cl.NodeFile(ctx, "worker-0", "/etc/containerd/certs.d/"+sourceHost+"/hosts.toml"); !strings.Contains(got, mirror.Host) {
			t.Fatalf("worker-0's hosts.toml for %s: %q", sourceHost, got)
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "from-the-mirror", Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: "worker-0", TerminationGracePeriodSeconds: ptr(int64(1)),
				Containers: []corev1.Container{{Name: "pause", Image: source + "@" + mirror.Digest}}},
		}
		if err := cl.C.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		var last corev1.PodStatus
		clustertest.Eventually(t, 2*time.Minute, "the pod running from the mirror's image", func() bool {
			var p corev1.Pod
			if cl.C.Get(ctx, client.ObjectKeyFromObject(pod), &p) != nil {
				return false
			}
			last = p.Status
			return p.Status.Phase == corev1.PodRunning
		})
		if mirror.ManifestGets() == 0 {
			t.Errorf("the pod runs, but the mirror served no manifest: %+v", last)
		}
		_ = cl.C.Delete(ctx, pod)
	})
}

// kubeadmRevert: `mco daemon revert` (from the agent's pod, as an admin would on a node) gives
// worker-1 its own chrony.conf back, and takes away what mco added.
func kubeadmRevert(t *testing.T, ctx context.Context, cl *clustertest.Cluster, s *doctest.Session) {
	t.Run("mco daemon revert restores worker-1's own files", func(t *testing.T) {
		s.Run(t, "adopt-revert") // README's: the agent's pod on worker-1 found by its node
		if got := cl.NodeFile(ctx, "worker-1", "/etc/chrony.conf"); got != devcluster.DistroChronyConf+handEdit+"\n" {
			t.Errorf("after revert worker-1's chrony.conf is %q, not its own", got)
		}
		for _, p := range []string{"/etc/kubernetes/kubelet.conf.d/50-machineconfiguration.conf", "/etc/containerd/certs.d/127.0.0.9:9/hosts.toml",
			"/etc/machine-config-daemon/currentconfig"} {
			if got, err := cl.Output(ctx, "worker-1", "sh", "-c", fmt.Sprintf("test -e %s && echo present || echo absent", p)); strings.TrimSpace(got) != "absent" {
				t.Errorf("after revert %s is %s (%v)", p, got, err)
			}
		}
	})
}
