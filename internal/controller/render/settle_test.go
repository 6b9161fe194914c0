package render

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/testenv"
)

func TestSettleWait(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	s := Settle{Quiet: time.Second, Max: 5 * time.Second}
	for _, tc := range []struct {
		name   string
		settle Settle
		burst  burst
		now    time.Duration
		want   time.Duration
	}{
		{"no change since the last render renders now", s, burst{}, 0, 0},
		{"one change waits out the quiet window", s, burst{at(0), at(0)}, 200 * time.Millisecond, 800 * time.Millisecond},
		{"a later change restarts the quiet window", s, burst{at(0), at(900 * time.Millisecond)}, time.Second, 900 * time.Millisecond},
		{"quiet long enough renders now", s, burst{at(0), at(2 * time.Second)}, 3 * time.Second, 0},
		{"exactly at the end of the window renders now", s, burst{at(0), at(0)}, time.Second, 0},
		{"a stream of changes cannot starve the pool: the bound", s, burst{at(0), at(4800 * time.Millisecond)}, 4900 * time.Millisecond, 100 * time.Millisecond},
		{"past the bound renders now though the last change is fresh", s, burst{at(0), at(5 * time.Second)}, 5 * time.Second, 0},
		{"a zero window renders at once", Settle{}, burst{at(0), at(0)}, 0, 0},
		{"a bound below the window renders at the bound", Settle{Quiet: 2 * time.Second, Max: time.Second}, burst{at(0), at(0)}, 0, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.settle.Wait(tc.burst, at(tc.now)); got != tc.want {
				t.Errorf("Wait = %v, want %v", got, tc.want)
			}
		})
	}
}

// The clock keeps one burst per pool, forgets what a render read, and keeps what came after.
func TestBurstClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	s := Settle{Quiet: time.Second, Max: 5 * time.Second}
	var c burstClock
	if got := c.wait("worker", s, t0); got != 0 {
		t.Fatalf("a pool without changes waits %v", got)
	}
	c.changed("worker", at(0))
	c.changed("worker", at(300*time.Millisecond))
	c.changed("infra", at(0))
	if got := c.wait("worker", s, at(400*time.Millisecond)); got != 900*time.Millisecond {
		t.Errorf("worker waits %v, want 900ms (quiet since 300ms)", got)
	}
	c.rendering("infra", at(time.Second))
	if got := c.wait("infra", s, at(time.Second)); got != 0 {
		t.Errorf("infra waits %v after its render", got)
	}
	// A change after the render started reading may be missing from it: a new burst, bounded
	// from the render's start.
	c.changed("worker", at(1400*time.Millisecond))
	c.rendering("worker", at(1300*time.Millisecond))
	if got := c.wait("worker", s, at(1500*time.Millisecond)); got != 900*time.Millisecond {
		t.Errorf("a change during the render waits %v, want 900ms", got)
	}
	c.changed("worker", at(6*time.Second))
	if got := c.wait("worker", s, at(6200*time.Millisecond)); got != 100*time.Millisecond {
		t.Errorf("worker waits %v, want 100ms (bound 5s after the render started at 1.3s)", got)
	}
	c.forget("worker")
	if got := c.wait("worker", s, at(6200*time.Millisecond)); got != 0 {
		t.Errorf("a forgotten pool waits %v", got)
	}
}

func TestInputChanges(t *testing.T) {
	base := fileMC("worker", "50-a", "/etc/a", "a")
	relabelled := base.DeepCopy()
	relabelled.Labels["extra"] = "x"
	edited := fileMC("worker", "50-a", "/etc/a", "b")
	annotated := base.DeepCopy()
	annotated.Annotations = map[string]string{"note": "x"}
	rendered := fileMC("worker", "rendered-worker-1", "/etc/a", "a")
	rendered.OwnerReferences = []metav1.OwnerReference{{APIVersion: "machineconfiguration.openshift.io/v1", Kind: "MachineConfigPool", Name: "worker", UID: "u", Controller: ptr.To(true)}}
	generated := fileMC("worker", "99-worker-generated-kubelet", "/etc/kubernetes/kubelet.conf", "x")
	generated.OwnerReferences = []metav1.OwnerReference{{APIVersion: "machineconfiguration.openshift.io/v1", Kind: "KubeletConfig", Name: "max-pods", UID: "k", Controller: ptr.To(true)}}
	for _, tc := range []struct {
		name     string
		old, cur client.Object
		want     bool
	}{
		{"created", nil, base, true},
		{"deleted", base, nil, true},
		{"spec edited", base, edited, true},
		{"labels edited", base, relabelled, true},
		{"only annotations", base, annotated, false},
		{"resync", base, base.DeepCopy(), false},
		{"a generated config (a KubeletConfig's) created", nil, generated, true},
		{"a rendered config created", nil, rendered, false},
		{"a rendered config deleted", rendered, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := machineConfigChanged(tc.old, tc.cur); got != tc.want {
				t.Errorf("machineConfigChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGeneratorChanges(t *testing.T) {
	kc := &mcfgv1.KubeletConfig{ObjectMeta: metav1.ObjectMeta{Name: "max-pods", Generation: 1}}
	processed := kc.DeepCopy()
	processed.Status.ObservedGeneration = 1
	edited := kc.DeepCopy()
	edited.Generation = 2
	deleting := kc.DeepCopy()
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	for _, tc := range []struct {
		name     string
		old, cur client.Object
		want     bool
	}{
		{"created", nil, kc, true},
		{"deleted", kc, nil, true},
		{"spec edited", kc, edited, true},
		{"deletion began", kc, deleting, true},
		{"its controller caught up (status only)", kc, processed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := generatorChanged(tc.old, tc.cur); got != tc.want {
				t.Errorf("generatorChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBurstRendersOnce: MachineConfigs created one after the other, as `kubectl apply -f dir/`
// does, give the pool one new target holding all of them, not one target per MachineConfig.
func TestBurstRendersOnce(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const role = "burst"
	if err := k8sClient.Create(ctx, fileMC(role, "00-burst-base", "/etc/base", "base")); err != nil {
		t.Fatal(err)
	}
	newPool(t, ctx, role)
	first := waitFor(t, ctx, role, "first render", targetIsNot("")).Spec.Configuration.Name

	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: k8sClient.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &mcfgv1.MachineConfigPoolList{}, client.MatchingFields{"metadata.name": role})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var names []string
	for i := range 5 {
		name := fmt.Sprintf("50-burst-%d", i)
		names = append(names, name)
		if err := k8sClient.Create(ctx, fileMC(role, name, fmt.Sprintf("/etc/burst-%d", i), "x")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // a renderer that does not wait renders between these
	}
	var targets []string
	for ev := range w.ResultChan() {
		p, ok := ev.Object.(*mcfgv1.MachineConfigPool)
		if !ok {
			continue
		}
		if name := p.Spec.Configuration.Name; name != first && !slices.Contains(targets, name) {
			targets = append(targets, name)
		}
		if all := len(names) == countSources(p, names); all {
			break
		}
	}
	if len(targets) != 1 {
		t.Fatalf("five MachineConfigs created %v apart gave the pool %d targets %v, want one holding all five", 50*time.Millisecond, len(targets), targets)
	}
}

func countSources(p *mcfgv1.MachineConfigPool, names []string) int {
	n := 0
	for _, s := range p.Spec.Configuration.Source {
		if slices.Contains(names, s.Name) {
			n++
		}
	}
	return n
}
