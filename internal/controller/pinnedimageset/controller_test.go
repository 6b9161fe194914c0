package pinnedimageset

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/mco-dev/mco/internal/pinnedimages"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/testenv"
)

var (
	k8sClient client.Client
	recorder  = record.NewFakeRecorder(100)
)

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithControlPlane(m, "pinned image set controller", func(e *testenv.Env) (func(), error) {
		k8sClient = e.Client
		ctx, cancel := context.WithCancel(context.Background())
		mgr, err := ctrl.NewManager(e.Config, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
		if err != nil {
			cancel()
			return nil, err
		}
		if err := (&Reconciler{Client: mgr.GetClient(), Recorder: recorder}).SetupWithManager(mgr); err != nil {
			cancel()
			return nil, err
		}
		go func() {
			if err := mgr.Start(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "manager:", err)
			}
		}()
		return cancel, nil
	}))
}

const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPoolSetsAndStatus runs the controller against the real API server and OpenShift's CRDs:
// the pool's list follows the sets' labels (a hand-written entry replaced, with an event), and
// its status follows the nodes' reports.
func TestPoolSetsAndStatus(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	const role = "pis"
	pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: role}, Spec: mcfgv1.MachineConfigPoolSpec{
		MachineConfigSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"machineconfiguration.openshift.io/role": role}},
		NodeSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/" + role: ""}},
		PinnedImageSets:       []mcfgv1.PinnedImageSetRef{{Name: "by-hand"}},
	}}
	if err := k8sClient.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	// The node controller's counts, as it would write them (a merge patch: the controller under
	// test may already have written the pool).
	before := pool.DeepCopy()
	pool.Status = mcfgv1.MachineConfigPoolStatus{MachineCount: 2, ReadyMachineCount: 2, UpdatedMachineCount: 2}
	if err := k8sClient.Status().Patch(ctx, pool, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		name   string
		labels map[string]string
	}{{"zz-set", map[string]string{"machineconfiguration.openshift.io/role": role}}, {"aa-set", map[string]string{"machineconfiguration.openshift.io/role": role}}, {"other", nil}} {
		set := &mcfgv1.PinnedImageSet{ObjectMeta: metav1.ObjectMeta{Name: s.name, Labels: s.labels},
			Spec: mcfgv1.PinnedImageSetSpec{PinnedImages: []mcfgv1.PinnedImageRef{{Name: mcfgv1.ImageDigestFormat("quay.io/x/" + s.name + digest)}}}}
		if err := k8sClient.Create(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	get := func() *mcfgv1.MachineConfigPool {
		p := &mcfgv1.MachineConfigPool{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: role}, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	eventually(t, "the pool's sets from their labels", func() bool {
		return fmt.Sprint(get().Spec.PinnedImageSets) == "[{aa-set} {zz-set}]"
	})
	eventually(t, "the event naming the entry written by hand", func() bool {
		select {
		case e := <-recorder.Events:
			return strings.Contains(e, ReasonReplaced) && strings.Contains(e, "by-hand")
		default:
			return false
		}
	})

	mcn := func(node string, entries []mcfgv1.MachineConfigNodeStatusPinnedImageSet, degraded string) {
		m := &mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: mcfgv1.MachineConfigNodeSpec{
			Node: mcfgv1.MCOObjectReference{Name: node}, Pool: mcfgv1.MCOObjectReference{Name: role},
			ConfigVersion: mcfgv1.MachineConfigNodeSpecMachineConfigVersion{Desired: "rendered-" + role + "-1"}}}
		if err := k8sClient.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
		m.Status.PinnedImageSets = entries
		m.Status.Conditions = []metav1.Condition{{Type: string(mcfgv1.MachineConfigNodePinnedImageSetsDegraded), Status: metav1.ConditionFalse,
			Reason: pinnedimages.ReasonAsExpected, Message: pinnedimages.MessageAllGood, LastTransitionTime: metav1.Now()}}
		if degraded != "" {
			m.Status.Conditions[0].Status, m.Status.Conditions[0].Reason, m.Status.Conditions[0].Message = metav1.ConditionTrue, pinnedimages.ReasonPrefetchFailed, degraded
		}
		if err := k8sClient.Status().Update(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	current := func(name string) mcfgv1.MachineConfigNodeStatusPinnedImageSet {
		return mcfgv1.MachineConfigNodeStatusPinnedImageSet{Name: name, CurrentGeneration: 1, DesiredGeneration: 1}
	}
	mcn("pis-node-a", []mcfgv1.MachineConfigNodeStatusPinnedImageSet{current("aa-set"), current("zz-set")}, "")
	mcn("pis-node-b", []mcfgv1.MachineConfigNodeStatusPinnedImageSet{current("aa-set"), {Name: "zz-set", DesiredGeneration: 1,
		LastFailedGeneration: 1, LastFailedGenerationError: "image quay.io/x/zz-set: not found in the registry"}},
		"PinnedImageSet zz-set: image quay.io/x/zz-set: not found in the registry")
	eventually(t, "the pool's synchronizer and condition from the nodes' reports", func() bool {
		p := get()
		c := poolcondition.Get(&p.Status, mcfgv1.MachineConfigPoolPinnedImageSetsDegraded)
		return len(p.Status.PoolSynchronizersStatus) == 1 && p.Status.PoolSynchronizersStatus[0].UpdatedMachineCount == 1 &&
			c != nil && c.Status == corev1.ConditionTrue
	})
	p := get()
	if st := p.Status.PoolSynchronizersStatus[0]; st.MachineCount != 2 || st.ReadyMachineCount != 2 || st.AvailableMachineCount != 2 || st.PoolSynchronizerType != mcfgv1.PinnedImageSets {
		t.Errorf("poolSynchronizersStatus %+v", st)
	}
	if c := poolcondition.Get(&p.Status, mcfgv1.MachineConfigPoolPinnedImageSetsDegraded); c.Reason != pinnedimages.ReasonNodesFailed ||
		c.Message != "Node pis-node-b reports: PinnedImageSet zz-set: image quay.io/x/zz-set: not found in the registry" {
		t.Errorf("PinnedImageSetsDegraded %+v", c)
	}
	if p.Status.MachineCount != 2 || p.Status.UpdatedMachineCount != 2 {
		t.Errorf("the node controller's counts changed: %+v", p.Status)
	}

	// The failing set goes: the pool's list shrinks, node b's report is the agent's to update;
	// once it is, nothing is degraded and both nodes count.
	if err := k8sClient.Delete(ctx, &mcfgv1.PinnedImageSet{ObjectMeta: metav1.ObjectMeta{Name: "zz-set"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pool's list without the deleted set", func() bool { return fmt.Sprint(get().Spec.PinnedImageSets) == "[{aa-set}]" })
	for _, node := range []string{"pis-node-a", "pis-node-b"} {
		m := &mcfgv1.MachineConfigNode{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: node}, m); err != nil {
			t.Fatal(err)
		}
		m.Status.PinnedImageSets = []mcfgv1.MachineConfigNodeStatusPinnedImageSet{current("aa-set")}
		m.Status.Conditions[0].Status, m.Status.Conditions[0].Reason, m.Status.Conditions[0].Message = metav1.ConditionFalse, pinnedimages.ReasonAsExpected, pinnedimages.MessageAllGood
		if err := k8sClient.Status().Update(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "both nodes counted, nothing degraded", func() bool {
		p := get()
		return p.Status.PoolSynchronizersStatus[0].UpdatedMachineCount == 2 &&
			!poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolPinnedImageSetsDegraded)
	})
}
