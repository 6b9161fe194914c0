package render

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// Each test uses its own role so pools and MachineConfigs of different tests never mix.
func newPool(t *testing.T, ctx context.Context, role string) *mcfgv1.MachineConfigPool {
	t.Helper()
	pool := &mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		Spec: mcfgv1.MachineConfigPoolSpec{
			MachineConfigSelector: &metav1.LabelSelector{MatchLabels: map[string]string{protocol.RoleLabel: role}},
			NodeSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/" + role: ""}},
		},
	}
	if err := k8sClient.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	return pool
}

func fileMC(role, name, path, content string) *mcfgv1.MachineConfig {
	return &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{protocol.RoleLabel: role}},
		Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(fmt.Sprintf(
			`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":%q,"contents":{"source":"data:,%s"},"mode":420}]}}`, path, content))}},
	}
}

// waitFor polls the pool until cond holds or the deadline passes.
func waitFor(t *testing.T, ctx context.Context, pool string, what string, cond func(*mcfgv1.MachineConfigPool) bool) *mcfgv1.MachineConfigPool {
	t.Helper()
	var p mcfgv1.MachineConfigPool
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: pool}, &p); err == nil && cond(&p) {
			return &p
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("pool %s: timed out waiting for %s; last seen spec.configuration=%+v conditions=%+v", pool, what, p.Spec.Configuration, p.Status.Conditions)
	return nil
}

func targetIsNot(name string) func(*mcfgv1.MachineConfigPool) bool {
	return func(p *mcfgv1.MachineConfigPool) bool {
		return p.Spec.Configuration.Name != "" && p.Spec.Configuration.Name != name
	}
}

func TestRenderLifecycle(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const role = "lifecycle"
	for _, mc := range []*mcfgv1.MachineConfig{
		fileMC(role, "00-lifecycle-base", "/etc/base", "base"),
		fileMC(role, "50-lifecycle-chrony", "/etc/chrony.conf", "v1"),
		fileMC(role, "99-lifecycle-override", "/etc/base", "override"),
	} {
		if err := k8sClient.Create(ctx, mc); err != nil {
			t.Fatal(err)
		}
	}
	newPool(t, ctx, role)

	// pool + 3 MCs -> rendered MC and the pool's target, sources in merge order.
	pool := waitFor(t, ctx, role, "first render", targetIsNot(""))
	first := pool.Spec.Configuration.Name
	if !strings.HasPrefix(first, "rendered-lifecycle-") {
		t.Fatalf("target %q", first)
	}
	var sources []string
	for _, s := range pool.Spec.Configuration.Source {
		sources = append(sources, s.Name)
	}
	if strings.Join(sources, " ") != "00-lifecycle-base 50-lifecycle-chrony 99-lifecycle-override" {
		t.Fatalf("sources %v", sources)
	}
	rendered := &mcfgv1.MachineConfig{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: first}, rendered); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rendered.Spec.Config.Raw), "data:,override") || strings.Contains(string(rendered.Spec.Config.Raw), "data:,base") {
		t.Fatalf("99- should override 00- at /etc/base: %s", rendered.Spec.Config.Raw)
	}
	if rendered.Annotations[protocol.GeneratedByControllerVersionAnnotation] != "test-version" || !metav1.IsControlledBy(rendered, pool) {
		t.Fatalf("rendered config lacks version annotation or owner: %+v", rendered.ObjectMeta)
	}
	if rendered.Spec.OSImageURL != "quay.io/example/os@sha256:default" {
		t.Fatalf("default OS image not applied: %q", rendered.Spec.OSImageURL)
	}
	if poolcondition.IsTrue(&pool.Status, mcfgv1.MachineConfigPoolRenderDegraded) {
		t.Fatal("RenderDegraded after a good render")
	}

	// change one MC -> new name.
	chrony := &mcfgv1.MachineConfig{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: "50-lifecycle-chrony"}, chrony); err != nil {
		t.Fatal(err)
	}
	original := chrony.Spec.Config.DeepCopy()
	chrony.Spec.Config = fileMC(role, "", "/etc/chrony.conf", "v2").Spec.Config
	if err := k8sClient.Update(ctx, chrony); err != nil {
		t.Fatal(err)
	}
	second := waitFor(t, ctx, role, "re-render after a change", targetIsNot(first)).Spec.Configuration.Name

	// revert -> the old rendered config is reused, not recreated.
	firstUID := rendered.UID
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: "50-lifecycle-chrony"}, chrony); err != nil {
		t.Fatal(err)
	}
	chrony.Spec.Config = *original
	if err := k8sClient.Update(ctx, chrony); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, role, "revert to the first name", func(p *mcfgv1.MachineConfigPool) bool { return p.Spec.Configuration.Name == first })
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: first}, rendered); err != nil || rendered.UID != firstUID {
		t.Fatalf("reverting should reuse %s (uid %s), got uid %s err %v", first, firstUID, rendered.UID, err)
	}

	// invalid MC -> RenderDegraded names it; the target stays.
	bad := fileMC(role, "60-lifecycle-bad", "/etc/bad", "x")
	bad.Spec.Config.Raw = []byte(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/bad","mode":3565,"contents":{"source":"data:,x"}}]}}`)
	if err := k8sClient.Create(ctx, bad); err != nil {
		t.Fatal(err)
	}
	degraded := waitFor(t, ctx, role, "RenderDegraded", func(p *mcfgv1.MachineConfigPool) bool {
		return poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolRenderDegraded)
	})
	msg := poolcondition.Get(&degraded.Status, mcfgv1.MachineConfigPoolRenderDegraded).Message
	if !strings.Contains(msg, "60-lifecycle-bad") || !strings.Contains(msg, "spec.config.storage.files.0.mode") {
		t.Fatalf("RenderDegraded message does not name the MC and field: %q", msg)
	}
	if !poolcondition.IsTrue(&degraded.Status, mcfgv1.MachineConfigPoolDegraded) {
		t.Fatal("Degraded should follow RenderDegraded")
	}
	if degraded.Spec.Configuration.Name != first {
		t.Fatalf("a failed render moved the target to %s", degraded.Spec.Configuration.Name)
	}

	// fixing it clears the condition.
	if err := k8sClient.Delete(ctx, bad); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, role, "RenderDegraded cleared", func(p *mcfgv1.MachineConfigPool) bool {
		c := poolcondition.Get(&p.Status, mcfgv1.MachineConfigPoolRenderDegraded)
		return c != nil && c.Status == corev1.ConditionFalse && !poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolDegraded)
	})
	_ = second
}

func TestGarbageCollectionKeepsReferencedConfigs(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const role = "gc"
	mc := fileMC(role, "00-gc", "/etc/gc", "gen0")
	if err := k8sClient.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	newPool(t, ctx, role)
	names := []string{waitFor(t, ctx, role, "first render", targetIsNot("")).Spec.Configuration.Name}

	// A node still runs the first config.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gc-node", Annotations: map[string]string{protocol.CurrentConfigAnnotation: names[0]}}}
	if err := k8sClient.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	for gen := 1; gen <= 4; gen++ {
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: "00-gc"}, mc); err != nil {
			t.Fatal(err)
		}
		mc.Spec.Config = fileMC(role, "", "/etc/gc", fmt.Sprintf("gen%d", gen)).Spec.Config
		if err := k8sClient.Update(ctx, mc); err != nil {
			t.Fatal(err)
		}
		names = append(names, waitFor(t, ctx, role, fmt.Sprintf("render %d", gen), targetIsNot(names[len(names)-1])).Spec.Configuration.Name)
		time.Sleep(1100 * time.Millisecond) // creation timestamps have one-second resolution
	}
	// names[4] is the target; with keep=2 the newest two (3, 4) stay, 0 stays because a node
	// runs it, and 1 and 2 go.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var present []bool
		for _, n := range names {
			err := k8sClient.Get(ctx, client.ObjectKey{Name: n}, &mcfgv1.MachineConfig{})
			present = append(present, !apierrors.IsNotFound(err))
		}
		want := []bool{true, false, false, true, true}
		if fmt.Sprint(present) == fmt.Sprint(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("rendered configs present %v, want %v (names %v)", present, want, names)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestEmptySelectorRendersNothing(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "selects-all"}, Spec: mcfgv1.MachineConfigPoolSpec{MachineConfigSelector: &metav1.LabelSelector{}}}
	if err := k8sClient.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var events corev1.EventList
		if err := k8sClient.List(ctx, &events); err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == "selects-all" && e.Reason == ReasonSelectsNothing {
				if err := k8sClient.Get(ctx, client.ObjectKey{Name: "selects-all"}, pool); err != nil {
					t.Fatal(err)
				}
				if pool.Spec.Configuration.Name != "" {
					t.Fatalf("a pool selecting everything was rendered: %s", pool.Spec.Configuration.Name)
				}
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("no SelectorEmpty event for a pool with an empty selector")
}
