package pinnedimages

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	imgA = "quay.io/a/a@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	imgB = "quay.io/b/b@sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	imgC = "quay.io/c/c@sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
)

func pis(name string, gen int64, labels map[string]string, images ...string) mcfgv1.PinnedImageSet {
	s := mcfgv1.PinnedImageSet{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: gen, Labels: labels}}
	for _, i := range images {
		s.Spec.PinnedImages = append(s.Spec.PinnedImages, mcfgv1.PinnedImageRef{Name: mcfgv1.ImageDigestFormat(i)})
	}
	return s
}

func workerPool(refs ...string) *mcfgv1.MachineConfigPool {
	p := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker", Generation: 3}}
	p.Spec.MachineConfigSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"machineconfiguration.openshift.io/role": "worker"}}
	for _, r := range refs {
		p.Spec.PinnedImageSets = append(p.Spec.PinnedImageSets, mcfgv1.PinnedImageSetRef{Name: r})
	}
	return p
}

var worker = map[string]string{"machineconfiguration.openshift.io/role": "worker"}

func TestRefsForPool(t *testing.T) {
	deleted := pis("gone", 1, worker, imgA)
	deleted.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	sets := []mcfgv1.PinnedImageSet{
		pis("zeta", 1, worker, imgA),
		pis("alpha", 1, worker, imgB),
		pis("master-only", 1, map[string]string{"machineconfiguration.openshift.io/role": "master"}, imgC),
		pis("unlabelled", 1, nil, imgC),
		deleted,
	}
	refs, keep, err := RefsForPool(workerPool("by-hand"), sets)
	if err != nil || !keep {
		t.Fatalf("keep=%v err=%v", keep, err)
	}
	if want := []mcfgv1.PinnedImageSetRef{{Name: "alpha"}, {Name: "zeta"}}; !reflect.DeepEqual(refs, want) {
		t.Errorf("refs = %v, want %v (by name, only the worker-labelled, not the deleted)", refs, want)
	}
	if got := Removed(workerPool("by-hand", "alpha").Spec.PinnedImageSets, refs); !reflect.DeepEqual(got, []string{"by-hand"}) {
		t.Errorf("Removed = %v, want [by-hand]", got)
	}
	none, keep, _ := RefsForPool(workerPool(), []mcfgv1.PinnedImageSet{pis("u", 1, nil, imgA)})
	if none != nil || !keep {
		t.Errorf("no matching set: refs %v keep %v, want nil (the field cleared) and keep", none, keep)
	}
	everything := workerPool("kept")
	everything.Spec.MachineConfigSelector = &metav1.LabelSelector{}
	if refs, keep, _ := RefsForPool(everything, sets); keep || len(refs) != 1 {
		t.Errorf("an empty selector: refs %v keep %v, want the pool's list left alone as OpenShift does", refs, keep)
	}
	bad := workerPool()
	bad.Spec.MachineConfigSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}}
	if _, _, err := RefsForPool(bad, sets); err == nil || !strings.Contains(err.Error(), "spec.machineConfigSelector") {
		t.Errorf("bad selector: err %v, want one naming spec.machineConfigSelector", err)
	}
}

func TestWantedAndImages(t *testing.T) {
	sets := []mcfgv1.PinnedImageSet{pis("one", 2, worker, imgB, imgA, imgB), pis("two", 5, worker, imgA, imgC)}
	got := Wanted([]*mcfgv1.MachineConfigPool{workerPool("two", "missing", "one", "two")}, sets)
	want := []Set{{Name: "two", Generation: 5, Images: []string{imgA, imgC}}, {Name: "one", Generation: 2, Images: []string{imgB, imgA}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Wanted = %+v\nwant %+v (the pool's order, each set and image once, a set that does not exist left out)", got, want)
	}
	if imgs := Images(got); !reflect.DeepEqual(imgs, []string{imgA, imgB, imgC}) {
		t.Errorf("Images = %v", imgs)
	}
}

func TestNodeStatus(t *testing.T) {
	sets := []Set{{Name: "ok", Generation: 3, Images: []string{imgA}}, {Name: "bad", Generation: 2, Images: []string{imgB}}, {Name: "new", Generation: 1}}
	prev := []mcfgv1.MachineConfigNodeStatusPinnedImageSet{
		{Name: "ok", CurrentGeneration: 2, DesiredGeneration: 2},
		{Name: "bad", CurrentGeneration: 1, DesiredGeneration: 2, LastFailedGeneration: 1, LastFailedGenerationError: "old"},
		{Name: "dropped", CurrentGeneration: 1, DesiredGeneration: 1},
	}
	results := map[string]Result{
		"ok":  {Pinned: true},
		"bad": {Failed: []ImageError{{Image: imgB, Reason: "not found in the registry"}}},
	}
	got := NodeStatus(prev, sets, results)
	want := []mcfgv1.MachineConfigNodeStatusPinnedImageSet{
		{Name: "ok", CurrentGeneration: 3, DesiredGeneration: 3},
		{Name: "bad", CurrentGeneration: 1, DesiredGeneration: 2, LastFailedGeneration: 2, LastFailedGenerationError: "image " + imgB + ": not found in the registry"},
		{Name: "new", DesiredGeneration: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NodeStatus =\n%+v\nwant\n%+v", got, want)
	}
	// Fixed: the failure is cleared; a set recreated at a lower generation never lowers a number.
	again := NodeStatus(got, []Set{{Name: "bad", Generation: 1}}, map[string]Result{"bad": {Pinned: true}})
	if w := []mcfgv1.MachineConfigNodeStatusPinnedImageSet{{Name: "bad", CurrentGeneration: 1, DesiredGeneration: 2}}; !reflect.DeepEqual(again, w) {
		t.Errorf("after the fix at a lower generation: %+v, want %+v", again, w)
	}
}

func TestConditions(t *testing.T) {
	now := metav1.NewTime(time.Unix(100, 0))
	sets := []Set{{Name: "s", Generation: 1}}
	cond := func(cs []metav1.Condition, t mcfgv1.StateProgress) metav1.Condition {
		c := meta.FindStatusCondition(cs, string(t))
		if c == nil {
			return metav1.Condition{}
		}
		return *c
	}
	other := metav1.Condition{Type: "Updated", Status: metav1.ConditionTrue, Reason: "x", LastTransitionTime: now}
	working := Conditions([]metav1.Condition{other}, "worker-0", sets, nil, false, now)
	if c := cond(working, mcfgv1.MachineConfigNodePinnedImageSetsProgressing); c.Status != metav1.ConditionTrue || c.Message != "node is prefetching images: worker-0" || c.Reason != ReasonPrefetch {
		t.Errorf("working: Progressing %+v", c)
	}
	if c := cond(working, "Updated"); c != other {
		t.Errorf("another condition changed: %+v", c)
	}
	failed := Conditions(working, "worker-0", sets, map[string]Result{"s": {SetError: "not enough storage"}}, true, now)
	if c := cond(failed, mcfgv1.MachineConfigNodePinnedImageSetsDegraded); c.Status != metav1.ConditionTrue || c.Message != "PinnedImageSet s: not enough storage" || c.Reason != ReasonPrefetchFailed {
		t.Errorf("failed: Degraded %+v", c)
	}
	if c := cond(failed, mcfgv1.MachineConfigNodePinnedImageSetsProgressing); c.Status != metav1.ConditionFalse || c.Message != MessageComplete {
		t.Errorf("failed: Progressing %+v", c)
	}
	fine := Conditions(failed, "worker-0", sets, map[string]Result{"s": {Pinned: true}}, true, now)
	if c := cond(fine, mcfgv1.MachineConfigNodePinnedImageSetsDegraded); c.Status != metav1.ConditionFalse || c.Message != MessageAllGood {
		t.Errorf("fine: Degraded %+v", c)
	}
	if got := OwnConditions(fine); len(got) != 2 {
		t.Errorf("OwnConditions = %v, want the two pinned image set conditions", got)
	}
}

func TestUpdatedAndSynchronizer(t *testing.T) {
	sets := []Set{{Name: "s", Generation: 2}}
	mcn := func(name string, entries ...mcfgv1.MachineConfigNodeStatusPinnedImageSet) mcfgv1.MachineConfigNode {
		return mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: mcfgv1.MachineConfigNodeStatus{PinnedImageSets: entries}}
	}
	done := mcn("a", mcfgv1.MachineConfigNodeStatusPinnedImageSet{Name: "s", CurrentGeneration: 2, DesiredGeneration: 2})
	old := mcn("b", mcfgv1.MachineConfigNodeStatusPinnedImageSet{Name: "s", CurrentGeneration: 1, DesiredGeneration: 1})
	unseen := mcn("c")
	failing := mcn("d", mcfgv1.MachineConfigNodeStatusPinnedImageSet{Name: "s", CurrentGeneration: 2, DesiredGeneration: 3, LastFailedGeneration: 3, LastFailedGenerationError: "x"})
	for _, c := range []struct {
		m    mcfgv1.MachineConfigNode
		want bool
	}{{done, true}, {old, false}, {unseen, false}, {failing, false}} {
		if got := Updated(c.m.Status.PinnedImageSets, sets); got != c.want {
			t.Errorf("Updated(%s) = %v, want %v", c.m.Name, got, c.want)
		}
	}
	if !Updated(nil, nil) {
		t.Error("a node of a pool without sets is updated")
	}
	pool := workerPool("s")
	pool.Status = mcfgv1.MachineConfigPoolStatus{MachineCount: 3, ReadyMachineCount: 3, UnavailableMachineCount: 1}
	got := Synchronizer(pool, []mcfgv1.MachineConfigNode{done, old, unseen, failing}, sets)
	want := mcfgv1.PoolSynchronizerStatus{PoolSynchronizerType: mcfgv1.PinnedImageSets, MachineCount: 3, UpdatedMachineCount: 1,
		ReadyMachineCount: 2, AvailableMachineCount: 2, UnavailableMachineCount: 1, ObservedGeneration: 3}
	if got != want {
		t.Errorf("Synchronizer = %+v\nwant %+v (ready clamped to available, as the schema demands)", got, want)
	}
}

func TestPoolDegraded(t *testing.T) {
	deg := func(name, msg string) mcfgv1.MachineConfigNode {
		return mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: mcfgv1.MachineConfigNodeStatus{Conditions: []metav1.Condition{
			{Type: string(mcfgv1.MachineConfigNodePinnedImageSetsDegraded), Status: metav1.ConditionTrue, Message: msg}}}}
	}
	ok := mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: "fine"}}
	st, reason, msg := Degraded([]mcfgv1.MachineConfigNode{deg("w2", "PinnedImageSet s: image x: not found"), ok, deg("w1", "PinnedImageSet s: image x: not found")}, nil)
	if st != metav1.ConditionTrue || reason != ReasonNodesFailed ||
		msg != "Node w1 reports: PinnedImageSet s: image x: not found; Node w2 reports: PinnedImageSet s: image x: not found" {
		t.Errorf("Degraded = %s %s %q", st, reason, msg)
	}
	if st, _, _ := Degraded([]mcfgv1.MachineConfigNode{ok}, nil); st != metav1.ConditionFalse {
		t.Errorf("no node failing: %s", st)
	}
	if st, _, msg := Degraded(nil, errors.New("Failed to populate pinned image sets for pool worker: boom")); st != metav1.ConditionTrue || !strings.Contains(msg, "boom") {
		t.Errorf("populate failure: %s %q", st, msg)
	}
}

func TestCheckStorage(t *testing.T) {
	gi := func(n int64) resource.Quantity { return *resource.NewQuantity(n<<30, resource.BinarySI) }
	for _, c := range []struct {
		name string
		s    Storage
		want string
	}{
		{"room", Storage{Allocatable: gi(40), Known: true, MinFree: gi(16), Missing: 5 << 30}, ""},
		{"small disk", Storage{Allocatable: gi(4), Known: true, MinFree: gi(16)}, "not enough storage: the node has 4.0Gi allocatable ephemeral storage, less than the 16Gi that must stay free after pulling"},
		{"too much", Storage{Allocatable: gi(40), Known: true, MinFree: gi(16), Missing: 12 << 30},
			"not enough storage: the missing images are 12.0Gi compressed, about 24.0Gi unpacked, and only 24.0Gi may be used (40.0Gi allocatable, 16Gi must stay free)"},
		{"unknown", Storage{MinFree: gi(16)}, "the node reports no allocatable ephemeral storage, so the disk guard cannot tell whether 16Gi stays free"},
	} {
		err := CheckStorage(c.s)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestCRIODropIn holds the drop-in to OpenShift's agent's encoding (the same TOML encoder over
// the same table), byte for byte.
func TestCRIODropIn(t *testing.T) {
	got, err := CRIODropIn([]string{imgA, imgB})
	if err != nil {
		t.Fatal(err)
	}
	want := "[crio]\n  [crio.image]\n    pinned_images = [\"" + imgA + "\", \"" + imgB + "\"]\n"
	if string(got) != want {
		t.Errorf("drop-in:\n%s\nwant\n%s", got, want)
	}
	if none, _ := CRIODropIn(nil); none != nil {
		t.Errorf("no images: %q, want no file", none)
	}
}

func TestCanPin(t *testing.T) {
	for _, c := range []struct {
		name, version, want string
	}{
		{"containerd", "v2.4.2", ""},
		{"containerd", "1.7.0", ""},
		{"containerd", "1.6.20~ds1", "the node's container runtime is containerd 1.6.20~ds1, which cannot pin images"},
		{"containerd", "garbage", "a version mco cannot read"},
		{"cri-o", "1.33.2", ""},
		{"docker", "28.0", "mco pins images with containerd"},
	} {
		err := CanPin(c.name, c.version)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("CanPin(%s, %s) = %v, want %q", c.name, c.version, err, c.want)
		}
	}
}
