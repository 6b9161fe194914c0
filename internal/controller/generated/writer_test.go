package generated

import (
	"context"
	"errors"
	"slices"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/generatedmc"
	"github.com/mco-dev/mco/internal/kubeletconfig"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

var kubeletConfigKind = mcfgv1.GroupVersion.WithKind("KubeletConfig")

// The scenarios run in order against one control plane: each builds on the state the last left.
func TestWriterLifecycle(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	events := record.NewFakeRecorder(100)
	w := Writer{Client: k8sClient, Recorder: events, Kind: "KubeletConfig", IsGeneratedName: kubeletconfig.IsGeneratedName}

	kc := &mcfgv1.KubeletConfig{ObjectMeta: metav1.ObjectMeta{Name: "max-pods"}}
	mustCreate(t, kc)
	worker := mcFor(kc, "worker", "99-worker-generated-kubelet")
	infra := mcFor(kc, "infra", "99-infra-generated-kubelet")

	t.Run("metadata: the suffix once, then the finalizers, no write when nothing changes", func(t *testing.T) {
		if err := w.EnsureMetadata(ctx, kc, ptr(""), []*mcfgv1.MachineConfig{worker, infra}); err != nil {
			t.Fatal(err)
		}
		if err := w.EnsureMetadata(ctx, kc, ptr("1"), []*mcfgv1.MachineConfig{worker}); err != nil {
			t.Fatal(err)
		}
		got := read(t, kc.Name)
		if v, ok := got.Annotations[protocol.NameSuffixAnnotation]; !ok || v != "" {
			t.Errorf("suffix annotation = %q, %v; want the first one recorded, \"\"", v, ok)
		}
		if want := []string{worker.Name, infra.Name}; !slices.Equal(got.Finalizers, want) {
			t.Errorf("finalizers = %v, want %v", got.Finalizers, want)
		}
		version := got.ResourceVersion
		if err := w.EnsureMetadata(ctx, got, nil, []*mcfgv1.MachineConfig{infra}); err != nil {
			t.Fatal(err)
		}
		if after := read(t, kc.Name); after.ResourceVersion != version {
			t.Errorf("unchanged metadata was written (resourceVersion %s → %s)", version, after.ResourceVersion)
		}
	})

	t.Run("apply creates, then leaves equal MachineConfigs alone", func(t *testing.T) {
		wrote, err := w.Apply(ctx, read(t, kc.Name), []*mcfgv1.MachineConfig{worker, infra}, nil)
		if err != nil || !wrote {
			t.Fatalf("Apply = %v, %v; want a write", wrote, err)
		}
		expectEvent(t, events, "Normal MachineConfigGenerated Generated 99-worker-generated-kubelet for pool worker")
		expectEvent(t, events, "Normal MachineConfigGenerated Generated 99-infra-generated-kubelet for pool infra")
		wrote, err = w.Apply(ctx, read(t, kc.Name), []*mcfgv1.MachineConfig{worker, infra}, existing(t))
		if err != nil || wrote {
			t.Fatalf("second Apply = %v, %v; want nothing written", wrote, err)
		}
	})

	t.Run("a name another object controls is refused, naming both, before any pool's is written", func(t *testing.T) {
		other := &mcfgv1.KubeletConfig{ObjectMeta: metav1.ObjectMeta{Name: "other"}}
		mustCreate(t, other)
		free := mcFor(other, "master", "99-master-generated-kubelet")
		wrote, err := w.Apply(ctx, other, []*mcfgv1.MachineConfig{free, mcFor(other, "worker", worker.Name)}, existing(t))
		var taken *NameTakenError
		if wrote || !errors.As(err, &taken) {
			t.Fatalf("Apply = %v, %v; want a NameTakenError and nothing written", wrote, err)
		}
		expectGone(t, free.Name)
		want := "KubeletConfig other: MachineConfig 99-worker-generated-kubelet is controlled by KubeletConfig max-pods; remove the " +
			protocol.NameSuffixAnnotation + " annotation from one of them to have it renamed"
		if err.Error() != want {
			t.Errorf("error = %q\nwant    %q", err, want)
		}
	})

	t.Run("prune deletes the MachineConfig of a pool no longer selected and drops its finalizer", func(t *testing.T) {
		if err := w.Prune(ctx, read(t, kc.Name), []*mcfgv1.MachineConfig{worker}, existing(t)); err != nil {
			t.Fatal(err)
		}
		expectGone(t, infra.Name)
		expectEvent(t, events, "Normal MachineConfigDeleted Deleted 99-infra-generated-kubelet")
		if got := read(t, kc.Name).Finalizers; !slices.Equal(got, []string{worker.Name}) {
			t.Errorf("finalizers = %v, want only %s", got, worker.Name)
		}
	})

	t.Run("finalize deletes what the finalizers name, one no object controls any more too, and lets go", func(t *testing.T) {
		cur := &mcfgv1.MachineConfig{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: worker.Name}, cur); err != nil {
			t.Fatal(err)
		}
		cur.OwnerReferences = nil
		if err := k8sClient.Update(ctx, cur); err != nil {
			t.Fatal(err)
		}
		if err := w.Finalize(ctx, read(t, kc.Name)); err != nil {
			t.Fatal(err)
		}
		expectGone(t, worker.Name)
		if got := read(t, kc.Name).Finalizers; len(got) != 0 {
			t.Errorf("finalizers = %v, want none", got)
		}
	})
}

func mcFor(owner *mcfgv1.KubeletConfig, pool, name string) *mcfgv1.MachineConfig {
	return generatedmc.MachineConfig(pool, name, []byte(`{"ignition":{"version":"3.5.0"}}`),
		[]metav1.OwnerReference{*metav1.NewControllerRef(owner, kubeletConfigKind)}, "test-version")
}

func ptr(s string) *string { return &s }

func mustCreate(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8sClient.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, name string) *mcfgv1.KubeletConfig {
	t.Helper()
	kc := &mcfgv1.KubeletConfig{}
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Name: name}, kc); err != nil {
		t.Fatal(err)
	}
	return kc
}

func existing(t *testing.T) []*mcfgv1.MachineConfig {
	t.Helper()
	var mcs mcfgv1.MachineConfigList
	if err := k8sClient.List(context.Background(), &mcs); err != nil {
		t.Fatal(err)
	}
	var out []*mcfgv1.MachineConfig
	for i := range mcs.Items {
		out = append(out, &mcs.Items[i])
	}
	return out
}

func expectGone(t *testing.T, name string) {
	t.Helper()
	err := k8sClient.Get(context.Background(), client.ObjectKey{Name: name}, &mcfgv1.MachineConfig{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("MachineConfig %s: Get = %v, want NotFound", name, err)
	}
}

func expectEvent(t *testing.T, events *record.FakeRecorder, want string) {
	t.Helper()
	select {
	case got := <-events.Events:
		if got != want {
			t.Errorf("event = %q, want %q", got, want)
		}
	default:
		t.Errorf("no event, want %q", want)
	}
}
