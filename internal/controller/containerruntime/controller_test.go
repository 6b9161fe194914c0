package containerruntime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/containerruntime"
	"github.com/mco-dev/mco/internal/generatedmc/mctest"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// OpenShift's spec.config for docs/ContainerRuntimeConfigDesign.md's example on worker
// (testdata/openshift/docs-set-pids-limit.json in internal/containerruntime).
const pidsLimitConfig = `{"ignition":{"version":"3.5.0"},"storage":{"files":[{"overwrite":true,"path":"/etc/crio/crio.conf.d/01-ctrcfg-pidsLimit","contents":{"compression":"","source":"data:text/plain;charset=utf-8;base64,W2NyaW9dCiAgW2NyaW8ucnVudGltZV0KICAgIHBpZHNfbGltaXQgPSAyMDQ4Cg=="},"mode":420}]}}`

// The scenarios run in order against one control plane: each builds on the state the last left.
func TestContainerRuntimeConfigLifecycle(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, name := range pools.Names {
		p, err := pools.Builtin(name)
		must(t, err)
		must(t, k8sClient.Create(ctx, p))
	}

	t.Run("a ContainerRuntimeConfig gets OpenShift's MachineConfig and Success", func(t *testing.T) {
		cfg := newConfig(t, `
metadata: {name: set-pids-limit}
spec:
  machineConfigPoolSelector: {matchLabels: {pools.operator.machineconfiguration.openshift.io/worker: ""}}
  containerRuntimeConfig: {pidsLimit: 2048}`)
		must(t, k8sClient.Create(ctx, cfg))
		mc := mctest.Wait(t, ctx, k8sClient, "99-worker-generated-containerruntime", func(*mcfgv1.MachineConfig) bool { return true })
		if !sameJSON(mc.Spec.Config.Raw, []byte(pidsLimitConfig)) {
			t.Errorf("spec.config %s, OpenShift's %s", mc.Spec.Config.Raw, pidsLimitConfig)
		}
		if !metav1.IsControlledBy(mc, cfg) || mc.Labels["machineconfiguration.openshift.io/role"] != "worker" ||
			mc.Annotations["machineconfiguration.openshift.io/generated-by-controller-version"] != testVersion {
			t.Errorf("metadata %+v", mc.ObjectMeta)
		}
		got := waitCondition(t, ctx, "set-pids-limit", mcfgv1.ContainerRuntimeConfigSuccess)
		if v, ok := got.Annotations[protocol.NameSuffixAnnotation]; !ok || v != "" || strings.Join(got.Finalizers, ",") != "99-worker-generated-containerruntime" {
			t.Errorf("annotations %v, finalizers %v", got.Annotations, got.Finalizers)
		}
		if c := got.Status.Conditions[len(got.Status.Conditions)-1]; c.Message != "Success" || c.Status != corev1.ConditionTrue || got.Status.ObservedGeneration != got.Generation {
			t.Errorf("status %+v", got.Status)
		}
	})

	t.Run("an unchanged config is not rewritten", func(t *testing.T) {
		before := mctest.Get(t, ctx, k8sClient, "99-worker-generated-containerruntime")
		cfg := getConfig(t, ctx, "set-pids-limit")
		// A label change wakes the pool watch, which reconciles every config.
		pool := &mcfgv1.MachineConfigPool{}
		must(t, k8sClient.Get(ctx, client.ObjectKey{Name: "worker"}, pool))
		pool.Labels["touched"] = "yes"
		must(t, k8sClient.Update(ctx, pool))
		time.Sleep(2 * time.Second)
		if after := mctest.Get(t, ctx, k8sClient, before.Name); after.ResourceVersion != before.ResourceVersion {
			t.Errorf("MachineConfig rewritten: %s -> %s", before.ResourceVersion, after.ResourceVersion)
		}
		if after := getConfig(t, ctx, cfg.Name); after.ResourceVersion != cfg.ResourceVersion {
			t.Errorf("ContainerRuntimeConfig rewritten: %s -> %s (%+v)", cfg.ResourceVersion, after.ResourceVersion, after.Status)
		}
	})

	t.Run("a second config on the pool gets suffix -1, storage.conf from the pool's own base", func(t *testing.T) {
		base := "[storage]\ndriver = \"overlay\"\nrunroot = \"/run/containers/storage\"\ngraphroot = \"/var/mnt/containers\"\n"
		must(t, k8sClient.Create(ctx, mctest.FileMC("01-worker-container-runtime", "worker", containerruntime.StorageConfPath, base)))
		must(t, k8sClient.Create(ctx, newConfig(t, `
metadata: {name: overlay}
spec:
  machineConfigPoolSelector: {matchLabels: {pools.operator.machineconfiguration.openshift.io/worker: ""}}
  containerRuntimeConfig: {overlaySize: 10G, logLevel: debug}`)))
		mc := mctest.Wait(t, ctx, k8sClient, "99-worker-generated-containerruntime-1", func(*mcfgv1.MachineConfig) bool { return true })
		files := mctest.Files(t, mc)
		if got := files[containerruntime.StorageConfPath]; !strings.Contains(got, `graphroot = "/var/mnt/containers"`) || !strings.Contains(got, `size = "10G"`) {
			t.Errorf("storage.conf not merged over the pool's base:\n%s", got)
		}
		if got := files[containerruntime.LogLevelDropIn]; got != "[crio]\n  [crio.runtime]\n    log_level = \"debug\"\n" {
			t.Errorf("log level drop-in %q", got)
		}
		got := waitCondition(t, ctx, "overlay", mcfgv1.ContainerRuntimeConfigSuccess)
		if got.Annotations[protocol.NameSuffixAnnotation] != "1" {
			t.Errorf("annotations %v", got.Annotations)
		}
	})

	t.Run("a refused config names the field and writes nothing", func(t *testing.T) {
		must(t, k8sClient.Create(ctx, newConfig(t, `
metadata: {name: too-few-pids}
spec:
  machineConfigPoolSelector: {matchLabels: {pools.operator.machineconfiguration.openshift.io/master: ""}}
  containerRuntimeConfig: {pidsLimit: 5}`)))
		got := waitCondition(t, ctx, "too-few-pids", mcfgv1.ContainerRuntimeConfigFailure)
		msg := got.Status.Conditions[len(got.Status.Conditions)-1].Message
		if !strings.Contains(msg, "ContainerRuntimeConfig too-few-pids") || !strings.Contains(msg, "spec.containerRuntimeConfig.pidsLimit") {
			t.Errorf("message %q does not name the object and field", msg)
		}
		if len(got.Finalizers) != 0 {
			t.Errorf("finalizers %v", got.Finalizers)
		}
		mctest.ExpectNone(t, ctx, k8sClient, "99-master-generated-containerruntime")
	})

	t.Run("fixing it generates the MachineConfig", func(t *testing.T) {
		cfg := getConfig(t, ctx, "too-few-pids")
		*cfg.Spec.ContainerRuntimeConfig.PidsLimit = 4096
		must(t, k8sClient.Update(ctx, cfg))
		mctest.Wait(t, ctx, k8sClient, "99-master-generated-containerruntime", func(*mcfgv1.MachineConfig) bool { return true })
		got := waitCondition(t, ctx, "too-few-pids", mcfgv1.ContainerRuntimeConfigSuccess)
		if n := len(got.Status.Conditions); n != 2 || got.Status.Conditions[0].Type != mcfgv1.ContainerRuntimeConfigFailure {
			t.Errorf("conditions %+v: want the Failure, then Success", got.Status.Conditions)
		}
	})

	t.Run("a selector no pool matches is a Failure", func(t *testing.T) {
		must(t, k8sClient.Create(ctx, newConfig(t, `
metadata: {name: lonely}
spec:
  machineConfigPoolSelector: {matchLabels: {no-such: pool}}
  containerRuntimeConfig: {logLevel: info}`)))
		got := waitCondition(t, ctx, "lonely", mcfgv1.ContainerRuntimeConfigFailure)
		if msg := got.Status.Conditions[len(got.Status.Conditions)-1].Message; !strings.Contains(msg, "spec.machineConfigPoolSelector: matches no MachineConfigPool") {
			t.Errorf("message %q", msg)
		}
	})

	t.Run("a MachineConfig deleted by hand is put back", func(t *testing.T) {
		mc := mctest.Get(t, ctx, k8sClient, "99-worker-generated-containerruntime")
		must(t, k8sClient.Delete(ctx, mc))
		mctest.Wait(t, ctx, k8sClient, mc.Name, func(n *mcfgv1.MachineConfig) bool { return n.UID != mc.UID })
	})

	t.Run("deleting a config deletes its MachineConfig", func(t *testing.T) {
		must(t, k8sClient.Delete(ctx, getConfig(t, ctx, "set-pids-limit")))
		mctest.WaitGone(t, ctx, k8sClient, mctest.GoneMC("99-worker-generated-containerruntime"))
		mctest.WaitGone(t, ctx, k8sClient, &mcfgv1.ContainerRuntimeConfig{ObjectMeta: metav1.ObjectMeta{Name: "set-pids-limit"}})
		// The other config's MachineConfig stays.
		mctest.Get(t, ctx, k8sClient, "99-worker-generated-containerruntime-1")
	})

	t.Run("selecting another pool moves the MachineConfig", func(t *testing.T) {
		cfg := getConfig(t, ctx, "overlay")
		cfg.Spec.MachineConfigPoolSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"pools.operator.machineconfiguration.openshift.io/master": ""}}
		must(t, k8sClient.Update(ctx, cfg))
		mctest.Wait(t, ctx, k8sClient, "99-master-generated-containerruntime-1", func(*mcfgv1.MachineConfig) bool { return true })
		mctest.WaitGone(t, ctx, k8sClient, mctest.GoneMC("99-worker-generated-containerruntime-1"))
		// The finalizer of the deleted MachineConfig goes in the controller's next write.
		var got *mcfgv1.ContainerRuntimeConfig
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
			got = getConfig(t, ctx, "overlay")
			if strings.Join(got.Finalizers, ",") == "99-master-generated-containerruntime-1" || time.Now().After(deadline) {
				break
			}
		}
		if strings.Join(got.Finalizers, ",") != "99-master-generated-containerruntime-1" {
			t.Errorf("finalizers %v", got.Finalizers)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newConfig(t *testing.T, manifest string) *mcfgv1.ContainerRuntimeConfig {
	t.Helper()
	cfg := &mcfgv1.ContainerRuntimeConfig{}
	must(t, yaml.UnmarshalStrict([]byte(manifest), cfg))
	return cfg
}

func getConfig(t *testing.T, ctx context.Context, name string) *mcfgv1.ContainerRuntimeConfig {
	t.Helper()
	cfg := &mcfgv1.ContainerRuntimeConfig{}
	must(t, k8sClient.Get(ctx, client.ObjectKey{Name: name}, cfg))
	return cfg
}

func waitCondition(t *testing.T, ctx context.Context, name string, want mcfgv1.ContainerRuntimeConfigStatusConditionType) *mcfgv1.ContainerRuntimeConfig {
	t.Helper()
	var cfg *mcfgv1.ContainerRuntimeConfig
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		cfg = getConfig(t, ctx, name)
		n := len(cfg.Status.Conditions)
		return n > 0 && cfg.Status.Conditions[n-1].Type == want && cfg.Status.ObservedGeneration == cfg.Generation, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s to be %s: %v (status %+v)", name, want, err, cfg.Status)
	}
	return cfg
}

func sameJSON(a, b []byte) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && jsonEqual(va, vb)
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
