package images

import (
	"context"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/daemon/imagepin"
	devcluster "github.com/mco-dev/mco/internal/dev/cluster"
	"github.com/mco-dev/mco/internal/dev/machine/metadata"
	"github.com/mco-dev/mco/internal/pinnedimages"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/test/clustertest"
)

// TestPinnedImageSets: OpenShift's PinnedImageSet on the worker pool, with images only the test's
// mirror (on this host, for the cluster's machines alone) has. The agents refuse at first with
// OpenShift's disk guard (16Gi must stay free; these machines' disks are 4 GiB), pull and pin
// once the admin sets the agent's --pinned-images-min-free, pull each image once per worker,
// report as OpenShift does, keep a set that cannot be pulled to itself, and the kubelet's image
// garbage collection, forced, removes an unpinned image and keeps the pinned one.
func TestPinnedImageSets(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: needs the dev cluster, real machines and the real binaries")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cl := clustertest.Start(t, ctx, 3)
	workers := []string{"worker-0", "worker-1", "worker-2"}
	const kept, dropped = "mco/pinned", "mco/dropped"
	mirror := clustertest.StartImageMirror(t, cl, kept, dropped)
	before := cl.Pool(t, ctx).Spec.Configuration.Name
	// The mirror speaks plain HTTP: the cluster's image configuration says so, as an admin's
	// would, and the registries it makes reach containerd as hosts.toml.
	img := &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec: configv1.ImageSpec{RegistrySources: configv1.RegistrySources{InsecureRegistries: []string{mirror.Host}}}}
	if err := cl.C.Create(ctx, img); err != nil {
		t.Fatal(err)
	}
	cl.WaitUpdated(t, ctx, before, int32(len(workers)))

	set := func(name string, images ...string) *mcfgv1.PinnedImageSet {
		s := &mcfgv1.PinnedImageSet{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{protocol.RoleLabel: protocol.WorkerPool}}}
		for _, i := range images {
			s.Spec.PinnedImages = append(s.Spec.PinnedImages, mcfgv1.PinnedImageRef{Name: mcfgv1.ImageDigestFormat(i)})
		}
		if err := cl.C.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	mcn := func(node string) *mcfgv1.MachineConfigNode {
		m := &mcfgv1.MachineConfigNode{}
		if err := cl.C.Get(ctx, client.ObjectKey{Name: node}, m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	entry := func(m *mcfgv1.MachineConfigNode, name string) mcfgv1.MachineConfigNodeStatusPinnedImageSet {
		for _, e := range m.Status.PinnedImageSets {
			if e.Name == name {
				return e
			}
		}
		return mcfgv1.MachineConfigNodeStatusPinnedImageSet{}
	}
	degraded := func(m *mcfgv1.MachineConfigNode) *metav1.Condition {
		return meta.FindStatusCondition(m.Status.Conditions, string(mcfgv1.MachineConfigNodePinnedImageSetsDegraded))
	}

	if !t.Run("OpenShift's disk guard refuses before any pull", func(t *testing.T) {
		s := set("e2e-pinned", mirror.Ref(kept), mirror.Ref(dropped))
		clustertest.Eventually(t, 2*time.Minute, "every worker refusing the set for storage", func() bool {
			for _, n := range workers {
				e := entry(mcn(n), s.Name)
				if e.LastFailedGeneration != 1 || !strings.Contains(e.LastFailedGenerationError, "not enough storage") {
					return false
				}
			}
			return true
		})
		for _, n := range workers {
			m := mcn(n)
			if c := degraded(m); c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "less than the 16Gi that must stay free") {
				t.Errorf("%s: PinnedImageSetsDegraded %+v, want True naming OpenShift's 16Gi", n, c)
			}
		}
		if got := mirror.BlobGets(); len(got) != 0 {
			t.Errorf("blobs were read before the guard allowed any pull: %v", got)
		}
	}) {
		return // the steps below start from this one's state
	}

	if !t.Run("with room allowed, every worker pulls each image once and pins it", func(t *testing.T) {
		// The admin's knob: the agent's flag, in its DaemonSet.
		patch := `[{"op":"add","path":"/spec/template/spec/containers/0/args/-","value":"--pinned-images-min-free=512Mi"}]`
		ds := &metav1.PartialObjectMetadata{}
		ds.SetGroupVersionKind(appsDaemonSet)
		ds.SetNamespace(devcluster.ServerNamespace)
		ds.SetName("mco-daemon")
		if err := cl.C.Patch(ctx, ds, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
		clustertest.Eventually(t, 4*time.Minute, "the pool reporting every worker's sets in place", func() bool {
			p := cl.Pool(t, ctx)
			return len(p.Status.PoolSynchronizersStatus) == 1 && p.Status.PoolSynchronizersStatus[0].UpdatedMachineCount == int64(len(workers)) &&
				!poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolPinnedImageSetsDegraded)
		})
		p := cl.Pool(t, ctx)
		if want := []mcfgv1.PinnedImageSetRef{{Name: "e2e-pinned"}}; fmt.Sprint(p.Spec.PinnedImageSets) != fmt.Sprint(want) {
			t.Errorf("the pool's spec.pinnedImageSets = %v, want %v (from the set's role label)", p.Spec.PinnedImageSets, want)
		}
		if st := p.Status.PoolSynchronizersStatus[0]; st.PoolSynchronizerType != mcfgv1.PinnedImageSets || st.MachineCount != int64(len(workers)) {
			t.Errorf("poolSynchronizersStatus = %+v", st)
		}
		for _, n := range workers {
			m := mcn(n)
			if e := entry(m, "e2e-pinned"); e.CurrentGeneration != 1 || e.DesiredGeneration != 1 || e.LastFailedGeneration != 0 {
				t.Errorf("%s: %+v, want current = desired = 1, no failure", n, e)
			}
			if c := degraded(m); c == nil || c.Status != metav1.ConditionFalse {
				t.Errorf("%s: PinnedImageSetsDegraded %+v", n, c)
			}
			for _, repo := range []string{kept, dropped} {
				if got := runtimePinned(t, ctx, cl, n, mirror.Ref(repo)); got != "pinned" {
					t.Errorf("%s: %s is %q, want pinned", n, repo, got)
				}
			}
		}
		// Each worker read each image's blobs once: one pull per node. The images are the pause
		// image with a label each, so their one layer is the preloaded pause image's, already on
		// every node: a pull reads only the image's config. The control plane read none.
		gets := mirror.BlobGets()
		for _, n := range workers {
			if got := gets[cl.NodeIP(t, ctx, n)]; got != 2 {
				t.Errorf("%s read %d blobs from the mirror, want 2 (one pull of each image, each reading its config): %v", n, got, gets)
			}
		}
		if got := gets[cl.NodeIP(t, ctx, "master-0")]; got != 0 {
			t.Errorf("master-0 read %d blobs; its pool has no set", got)
		}
	}) {
		return // the steps below start from this one's state
	}

	if !t.Run("a set with an image no registry has fails alone, naming the image", func(t *testing.T) {
		absent := mirror.Host + "/mco/absent@sha256:" + strings.Repeat("0", 63) + "1"
		s := set("e2e-missing", absent)
		t.Cleanup(func() { _ = cl.C.Delete(context.Background(), s) })
		clustertest.Eventually(t, 2*time.Minute, "the pool naming the missing image", func() bool {
			p := cl.Pool(t, ctx)
			c := poolcondition.Get(&p.Status, mcfgv1.MachineConfigPoolPinnedImageSetsDegraded)
			return c != nil && c.Status == "True" && strings.Count(c.Message, "Node worker-") == len(workers) && strings.Contains(c.Message, absent)
		})
		p := cl.Pool(t, ctx)
		if c := poolcondition.Get(&p.Status, mcfgv1.MachineConfigPoolPinnedImageSetsDegraded); c.Reason != pinnedimages.ReasonNodesFailed || !strings.Contains(c.Message, "PinnedImageSet e2e-missing: image "+absent+": not found in the registry (http://"+mirror.Host+" has no such manifest)") {
			t.Errorf("the pool's PinnedImageSetsDegraded: %+v", c)
		}
		if poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolDegraded) {
			t.Error("the pool is Degraded: a set that cannot be pulled is the set's failure, not the config's")
		}
		for _, n := range workers {
			m := mcn(n)
			if e := entry(m, "e2e-pinned"); e.CurrentGeneration != 1 || e.LastFailedGeneration != 0 {
				t.Errorf("%s: the other set %+v, want still in place", n, e)
			}
			if e := entry(m, s.Name); e.LastFailedGeneration != 1 || e.CurrentGeneration != 0 || !strings.Contains(e.LastFailedGenerationError, absent) {
				t.Errorf("%s: %+v, want failed at generation 1 naming %s", n, e, absent)
			}
			if got := runtimePinned(t, ctx, cl, n, mirror.Ref(kept)); got != "pinned" {
				t.Errorf("%s: %s is %q after another set failed", n, kept, got)
			}
		}
		if err := cl.C.Delete(ctx, s); err != nil {
			t.Fatal(err)
		}
		clustertest.Eventually(t, 2*time.Minute, "the pool's PinnedImageSetsDegraded cleared", func() bool {
			p := cl.Pool(t, ctx)
			return !poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolPinnedImageSetsDegraded)
		})
	}) {
		return // the steps below start from this one's state
	}

	t.Run("the kubelet's image garbage collection removes an unpinned image and keeps the pinned one", func(t *testing.T) {
		// One image leaves the set: the agents unpin it.
		s := &mcfgv1.PinnedImageSet{}
		if err := cl.C.Get(ctx, client.ObjectKey{Name: "e2e-pinned"}, s); err != nil {
			t.Fatal(err)
		}
		s.Spec.PinnedImages = []mcfgv1.PinnedImageRef{{Name: mcfgv1.ImageDigestFormat(mirror.Ref(kept))}}
		if err := cl.C.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		clustertest.Eventually(t, 2*time.Minute, "every worker at the set's generation 2, the dropped image unpinned", func() bool {
			for _, n := range workers {
				if entry(mcn(n), s.Name).CurrentGeneration != 2 || runtimePinned(t, ctx, cl, n, mirror.Ref(dropped)) != "present" {
					return false
				}
			}
			return true
		})
		forceImageGC(t, ctx, cl, workers, mirror.Ref(dropped))
		for _, n := range workers {
			if got := runtimePinned(t, ctx, cl, n, mirror.Ref(kept)); got != "pinned" {
				t.Errorf("%s: the pinned image is %q after the kubelet's image garbage collection", n, got)
			}
		}
	})
}

var appsDaemonSet = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}

// runtimePinned says how the machine's containerd holds ref: "pinned" (the label its CRI
// reports to the kubelet as pinned), "present", or "absent".
func runtimePinned(t *testing.T, ctx context.Context, cl *clustertest.Cluster, machine, ref string) string {
	t.Helper()
	out := cl.InMachine(t, ctx, machine, "ctr", "--namespace", "k8s.io", "images", "ls", "name=="+ref)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	switch {
	case len(lines) < 2:
		return "absent"
	case strings.Contains(lines[1], imagepin.ContainerdPinnedLabel+"="+imagepin.ContainerdPinnedValue):
		return "pinned"
	}
	return "present"
}

// forceImageGC makes the workers' kubelets collect unused images now, as disk pressure does: a
// drop-in in each kubelet's configuration directory (the platform's, metadata.KubeletDropInDir)
// with an eviction threshold the machines' disks are always under, so each kubelet's eviction
// manager (every 10 s) reclaims node-level resources first, deleting every unused image its
// runtime does not report pinned. (Its periodic collection, with a low threshold, would take up
// to 5 minutes: the one at the kubelet's start finds every image just detected.) The minimum age is
// 1s, not 0s, which the kubelet reads as unset (2 minutes). Written by hand,
// not by a KubeletConfig: a node under disk pressure is unavailable, as on OpenShift, so the
// rollout taking the threshold away again could never start. Once unpinned is gone from every
// worker, the drop-in goes and the kubelets restart without the pressure.
func forceImageGC(t *testing.T, ctx context.Context, cl *clustertest.Cluster, workers []string, unpinned string) {
	t.Helper()
	dropIn := path.Join(metadata.KubeletDropInDir, "99-e2e-image-gc.conf")
	const conf = `{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","imageMinimumGCAge":"1s",` +
		`"evictionHard":{"nodefs.available":"99%","imagefs.available":"99%","memory.available":"100Mi"},"evictionPressureTransitionPeriod":"0s"}`
	restart := func(script string) {
		for _, n := range workers {
			cl.InMachine(t, ctx, n, "sh", "-c", script+" && systemctl restart kubelet")
		}
	}
	restart("printf '%s\\n' '" + conf + "' > " + dropIn)
	defer restart("rm -f " + dropIn)
	clustertest.Eventually(t, 3*time.Minute, "the unpinned image collected on every worker", func() bool {
		for _, n := range workers {
			if runtimePinned(t, ctx, cl, n, unpinned) != "absent" {
				return false
			}
		}
		return true
	})
}
