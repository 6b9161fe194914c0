package generated

import (
	"context"
	"slices"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/controller/enqueue"
	"github.com/mco-dev/mco/internal/kubeletconfig"
	"github.com/mco-dev/mco/internal/testenv"
)

func TestEnqueue(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	for _, name := range []string{"watch-a", "watch-b"} {
		mustCreate(t, &mcfgv1.KubeletConfig{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	all := enqueue.All(k8sClient, &mcfgv1.KubeletConfigList{}, "KubeletConfigs")
	everyOne := all(ctx, nil)
	for _, name := range []string{"watch-a", "watch-b"} {
		if !slices.Contains(everyOne, request(name)) {
			t.Errorf("enqueue.All = %v, want %s among them", everyOne, name)
		}
	}

	forMC := EnqueueForMachineConfig(kubeletconfig.KubeletConfigKind, kubeletconfig.KubeletConfPath, all)
	owner := &mcfgv1.KubeletConfig{ObjectMeta: metav1.ObjectMeta{Name: "watch-a", UID: "a"}}
	pool := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "worker", UID: "p"}}
	base := &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: "01-worker-kubelet"}}
	base.Spec.Config = runtime.RawExtension{Raw: []byte(`{"storage":{"files":[{"path":"` + kubeletconfig.KubeletConfPath + `"}]}}`)}
	rendered := base.DeepCopy()
	rendered.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(pool, mcfgv1.GroupVersion.WithKind("MachineConfigPool"))}
	for _, tc := range []struct {
		what string
		mc   *mcfgv1.MachineConfig
		want []reconcile.Request
	}{
		{"a generated one wakes its owner", mcFor(owner, "worker", "99-worker-generated-kubelet"), []reconcile.Request{request("watch-a")}},
		{"a possible base wakes every one", base, everyOne},
		{"a rendered one wakes none", rendered, nil},
		{"any other wakes none", &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: "50-other"}}, nil},
	} {
		if got := forMC(ctx, tc.mc); !slices.Equal(got, tc.want) {
			t.Errorf("%s: EnqueueForMachineConfig = %v, want %v", tc.what, got, tc.want)
		}
	}
}

func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: client.ObjectKey{Name: name}}
}

// A pool update wakes the generators only when their inputs changed, not for a new rendered config.
func TestPoolInputChanged(t *testing.T) {
	base := &mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: "worker", Generation: 1, Labels: map[string]string{"a": "b"}},
		Spec: mcfgv1.MachineConfigPoolSpec{MachineConfigSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "worker"}},
			NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/worker": ""}}},
	}
	for what, tc := range map[string]struct {
		edit func(*mcfgv1.MachineConfigPool)
		want bool
	}{
		"new rendered config": {func(p *mcfgv1.MachineConfigPool) { p.Generation++; p.Spec.Configuration.Name = "rendered-worker-2" }, false},
		"paused":              {func(p *mcfgv1.MachineConfigPool) { p.Generation++; p.Spec.Paused = true }, false},
		"label":               {func(p *mcfgv1.MachineConfigPool) { p.Labels["custom"] = "" }, true},
		"machineConfigSelector": {func(p *mcfgv1.MachineConfigPool) {
			p.Generation++
			p.Spec.MachineConfigSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"role": "infra"}}
		}, true},
		"nodeSelector": {func(p *mcfgv1.MachineConfigPool) {
			p.Generation++
			p.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/master": ""}}
		}, true},
	} {
		cur := base.DeepCopy()
		tc.edit(cur)
		if got := PoolInputChanged().Update(event.UpdateEvent{ObjectOld: base, ObjectNew: cur}); got != tc.want {
			t.Errorf("%s: passed = %v, want %v", what, got, tc.want)
		}
	}
	if !PoolInputChanged().Create(event.CreateEvent{Object: base}) || !PoolInputChanged().Delete(event.DeleteEvent{Object: base}) {
		t.Error("a new or deleted pool must wake the generators")
	}
}
