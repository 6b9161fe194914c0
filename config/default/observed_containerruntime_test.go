package install

import (
	"context"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// checkContainerRuntime: a ContainerRuntimeConfig on the worker pool gets its MachineConfig and
// Success (suffix annotation, finalizer, status), and is deleted with it; an
// ImageDigestMirrorSet gives every built-in pool its registries MachineConfig. Every call the
// two controllers make on the way is recorded.
func checkContainerRuntime(ctx context.Context, t *testing.T, admin client.Client) {
	cfg := &mcfgv1.ContainerRuntimeConfig{ObjectMeta: metav1.ObjectMeta{Name: "pids"}, Spec: mcfgv1.ContainerRuntimeConfigSpec{
		MachineConfigPoolSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pools.operator.machineconfiguration.openshift.io/worker": ""}},
		ContainerRuntimeConfig:    &mcfgv1.ContainerRuntimeConfiguration{PidsLimit: ptr.To[int64](2048)}}}
	if err := admin.Create(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(cfg), cfg); err != nil {
			return false, err
		}
		if err := admin.Get(ctx, client.ObjectKey{Name: "99-worker-generated-containerruntime"}, &mcfgv1.MachineConfig{}); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		n := len(cfg.Status.Conditions)
		return n > 0 && cfg.Status.Conditions[n-1].Type == mcfgv1.ContainerRuntimeConfigSuccess, nil
	})
	if err != nil {
		t.Fatalf("ContainerRuntimeConfig pids not applied: %v; status %+v", err, cfg.Status)
	}
	if err := admin.Delete(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	idms := &configv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "mirror"}, Spec: configv1.ImageDigestMirrorSetSpec{
		ImageDigestMirrors: []configv1.ImageDigestMirrors{{Source: "quay.io/example", Mirrors: []configv1.ImageMirror{"mirror.example.com/example"}}}}}
	if err := admin.Create(ctx, idms); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, name := range []string{"99-worker-generated-registries", "99-master-generated-registries"} {
			if err := admin.Get(ctx, client.ObjectKey{Name: name}, &mcfgv1.MachineConfig{}); err != nil {
				return false, client.IgnoreNotFound(err)
			}
		}
		err := admin.Get(ctx, client.ObjectKey{Name: "99-worker-generated-containerruntime"}, &mcfgv1.MachineConfig{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("registries MachineConfigs not generated, or the deleted ContainerRuntimeConfig's MachineConfig left: %v", err)
	}
}
