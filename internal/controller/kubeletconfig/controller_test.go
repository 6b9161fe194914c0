package kubeletconfig

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
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/generatedmc/mctest"
	"github.com/mco-dev/mco/internal/kubeletconfig"
	"github.com/mco-dev/mco/internal/kubeletfiles"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

const baseConf = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: systemd
clusterDNS: [10.3.0.10]
clusterDomain: cluster.local
maxPods: 250
systemReservedCgroup: /system.slice
systemCgroups: /system.slice
`

// The scenarios run in order against one control plane: each builds on the state the last left.
func TestKubeletConfigLifecycle(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, name := range pools.Names {
		p, err := pools.Builtin(name)
		must(t, err)
		must(t, k8sClient.Create(ctx, p))
	}
	// The worker pool's base kubelet configuration, as an installer would provide it.
	must(t, k8sClient.Create(ctx, mctest.FileMC("01-worker-kubelet", "worker", kubeletconfig.KubeletConfPath, baseConf)))
	must(t, k8sClient.Create(ctx, mctest.FileMC("00-master", "master", "/etc/motd", "master\n")))

	t.Run("a KubeletConfig gets its MachineConfig and is Accepted", func(t *testing.T) {
		kc := newKubeletConfig(t, `
metadata: {name: set-max-pods}
spec:
  logLevel: 5
  machineConfigPoolSelector: {matchLabels: {pools.operator.machineconfiguration.openshift.io/worker: ""}}
  kubeletConfig: {maxPods: 100}`)
		must(t, k8sClient.Create(ctx, kc))
		mc := mctest.Wait(t, ctx, k8sClient, "99-worker-generated-kubelet", func(mc *mcfgv1.MachineConfig) bool { return true })
		files := mctest.Files(t, mc)
		conf := files[kubeletconfig.KubeletConfPath]
		for _, want := range []string{"maxPods: 100", "clusterDNS:\n- 10.3.0.10", "systemReservedCgroup: /system.slice"} {
			if !strings.Contains(conf, want) {
				t.Errorf("kubelet.conf lacks %q:\n%s", want, conf)
			}
		}
		if files[kubeletconfig.LogLevelDropInPath] != "[Service]\nEnvironment=\"KUBELET_LOG_LEVEL=5\"\n" {
			t.Errorf("log level drop-in %q", files[kubeletconfig.LogLevelDropInPath])
		}
		if !metav1.IsControlledBy(mc, kc) || mc.Labels["machineconfiguration.openshift.io/role"] != "worker" ||
			mc.Annotations["machineconfiguration.openshift.io/generated-by-controller-version"] != testVersion {
			t.Errorf("metadata %+v", mc.ObjectMeta)
		}
		got := waitAccepted(t, ctx, "set-max-pods", corev1.ConditionTrue)
		if got.Annotations[protocol.NameSuffixAnnotation] != "" || strings.Join(got.Finalizers, ",") != "99-worker-generated-kubelet" {
			t.Errorf("annotations %v, finalizers %v", got.Annotations, got.Finalizers)
		}
		// The render controller merges it like any MachineConfig: 99- sorts after the base.
		waitRendered(t, ctx, "worker", func(rendered map[string]string) bool {
			return strings.Contains(rendered[kubeletconfig.KubeletConfPath], "maxPods: 100")
		})
	})

	t.Run("a second KubeletConfig on the pool gets -1", func(t *testing.T) {
		must(t, k8sClient.Create(ctx, newKubeletConfig(t, `
metadata: {name: more-pods}
spec:
  machineConfigPoolSelector: {matchLabels: {pools.operator.machineconfiguration.openshift.io/worker: ""}}
  kubeletConfig: {maxPods: 200}`)))
		mc := mctest.Wait(t, ctx, k8sClient, "99-worker-generated-kubelet-1", func(*mcfgv1.MachineConfig) bool { return true })
		if conf := mctest.Files(t, mc)[kubeletconfig.KubeletConfPath]; !strings.Contains(conf, "maxPods: 200") {
			t.Errorf("kubelet.conf of the second:\n%s", conf)
		}
		got := waitAccepted(t, ctx, "more-pods", corev1.ConditionTrue)
		if got.Annotations[protocol.NameSuffixAnnotation] != "1" {
			t.Errorf("suffix annotation %q", got.Annotations[protocol.NameSuffixAnnotation])
		}
		waitRendered(t, ctx, "worker", func(rendered map[string]string) bool {
			return strings.Contains(rendered[kubeletconfig.KubeletConfPath], "maxPods: 200")
		})
	})

	t.Run("a refused KubeletConfig names the field and writes nothing", func(t *testing.T) {
		must(t, k8sClient.Create(ctx, newKubeletConfig(t, `
metadata: {name: bad-driver}
spec:
  machineConfigPoolSelector: {matchLabels: {pools.operator.machineconfiguration.openshift.io/master: ""}}
  kubeletConfig: {cgroupDriver: cgroupfs, maxPods: 10}`)))
		got := waitAccepted(t, ctx, "bad-driver", corev1.ConditionFalse)
		if msg := got.Status.Conditions[len(got.Status.Conditions)-1].Message; !strings.Contains(msg, "KubeletConfig bad-driver: spec.kubeletConfig.cgroupDriver: is not allowed to be set, but contains: cgroupfs") {
			t.Errorf("message %q", msg)
		}
		if len(got.Finalizers) != 0 || got.Status.ObservedGeneration != got.Generation {
			t.Errorf("finalizers %v, observedGeneration %d of %d", got.Finalizers, got.Status.ObservedGeneration, got.Generation)
		}
		mctest.ExpectNone(t, ctx, k8sClient, "99-master-generated-kubelet")
	})

	t.Run("a KubeletConfig matching no pool says so", func(t *testing.T) {
		must(t, k8sClient.Create(ctx, newKubeletConfig(t, `
metadata: {name: no-pool}
spec:
  machineConfigPoolSelector: {matchLabels: {pools.operator.machineconfiguration.openshift.io/gpu: ""}}
  kubeletConfig: {maxPods: 10}`)))
		got := waitAccepted(t, ctx, "no-pool", corev1.ConditionFalse)
		if msg := got.Status.Conditions[len(got.Status.Conditions)-1].Message; !strings.Contains(msg, "spec.machineConfigPoolSelector: matches no MachineConfigPool") {
			t.Errorf("message %q", msg)
		}
	})

	t.Run("an edit regenerates, a hand edit of the MachineConfig is undone", func(t *testing.T) {
		kc := &mcfgv1.KubeletConfig{}
		must(t, k8sClient.Get(ctx, client.ObjectKey{Name: "more-pods"}, kc))
		kc.Spec.KubeletConfig = &runtime.RawExtension{Raw: []byte(`{"maxPods":220}`)}
		must(t, k8sClient.Update(ctx, kc))
		mc := mctest.Wait(t, ctx, k8sClient, "99-worker-generated-kubelet-1", func(mc *mcfgv1.MachineConfig) bool {
			return strings.Contains(mctest.Files(t, mc)[kubeletconfig.KubeletConfPath], "maxPods: 220")
		})
		mc.Spec.KernelArguments = []string{"hand=edit"}
		must(t, k8sClient.Update(ctx, mc))
		mctest.Wait(t, ctx, k8sClient, "99-worker-generated-kubelet-1", func(mc *mcfgv1.MachineConfig) bool { return len(mc.Spec.KernelArguments) == 0 })
		waitAccepted(t, ctx, "more-pods", corev1.ConditionTrue)
	})

	t.Run("a settled KubeletConfig is not rewritten", func(t *testing.T) {
		kc := waitAccepted(t, ctx, "set-max-pods", corev1.ConditionTrue)
		mc := mctest.Wait(t, ctx, k8sClient, "99-worker-generated-kubelet", func(*mcfgv1.MachineConfig) bool { return true })
		// A MachineConfig writing kubelet.conf wakes every KubeletConfig; nothing changes.
		must(t, k8sClient.Create(ctx, mctest.FileMC("00-master-kubelet-unrelated", "master", kubeletconfig.KubeletConfPath+".d/x", "x\n")))
		poke(t, ctx, "set-max-pods")
		time.Sleep(2 * time.Second)
		after, afterMC := &mcfgv1.KubeletConfig{}, &mcfgv1.MachineConfig{}
		must(t, k8sClient.Get(ctx, client.ObjectKey{Name: "set-max-pods"}, after))
		must(t, k8sClient.Get(ctx, client.ObjectKey{Name: mc.Name}, afterMC))
		if afterMC.ResourceVersion != mc.ResourceVersion || !equalConditions(after.Status, kc.Status) {
			t.Errorf("rewritten: MachineConfig %s → %s, status %+v → %+v", mc.ResourceVersion, afterMC.ResourceVersion, kc.Status, after.Status)
		}
	})

	t.Run("moving to another pool deletes the old MachineConfig", func(t *testing.T) {
		kc := &mcfgv1.KubeletConfig{}
		must(t, k8sClient.Get(ctx, client.ObjectKey{Name: "set-max-pods"}, kc))
		kc.Spec.MachineConfigPoolSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"pools.operator.machineconfiguration.openshift.io/master": ""}}
		must(t, k8sClient.Update(ctx, kc))
		// The master pool has no base MachineConfig (a kubeadm-built pool): the KubeletConfig
		// becomes the kubelet drop-in alone.
		mc := mctest.Wait(t, ctx, k8sClient, "99-master-generated-kubelet", func(*mcfgv1.MachineConfig) bool { return true })
		want := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nlogging:\n  verbosity: 5\nmaxPods: 100\n"
		if files := mctest.Files(t, mc); len(files) != 1 || files[kubeletfiles.DropInPath] != want {
			t.Errorf("master files %q, want only %s:\n%s", files, kubeletfiles.DropInPath, want)
		}
		mctest.WaitGone(t, ctx, k8sClient, mctest.GoneMC("99-worker-generated-kubelet"))
		got := waitAccepted(t, ctx, "set-max-pods", corev1.ConditionTrue)
		if strings.Join(got.Finalizers, ",") != "99-master-generated-kubelet" {
			t.Errorf("finalizers %v", got.Finalizers)
		}
	})

	t.Run("deleting a KubeletConfig deletes its MachineConfig", func(t *testing.T) {
		kc := &mcfgv1.KubeletConfig{ObjectMeta: metav1.ObjectMeta{Name: "more-pods"}}
		must(t, k8sClient.Delete(ctx, kc))
		mctest.WaitGone(t, ctx, k8sClient, mctest.GoneMC("99-worker-generated-kubelet-1"))
		poll(t, ctx, "KubeletConfig more-pods to go", func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: "more-pods"}, &mcfgv1.KubeletConfig{}))
		})
		// The pool falls back to its base.
		waitRendered(t, ctx, "worker", func(rendered map[string]string) bool {
			return strings.Contains(rendered[kubeletconfig.KubeletConfPath], "maxPods: 250")
		})
	})
}

func newKubeletConfig(t *testing.T, doc string) *mcfgv1.KubeletConfig {
	t.Helper()
	kc := &mcfgv1.KubeletConfig{}
	must(t, yaml.UnmarshalStrict([]byte(doc), kc))
	return kc
}

// waitAccepted waits until the KubeletConfig's latest sync of its generation has the outcome.
func waitAccepted(t *testing.T, ctx context.Context, name string, status corev1.ConditionStatus) *mcfgv1.KubeletConfig {
	t.Helper()
	kc := &mcfgv1.KubeletConfig{}
	poll(t, ctx, fmt.Sprintf("KubeletConfig %s Accepted=%s", name, status), func() bool {
		if k8sClient.Get(ctx, client.ObjectKey{Name: name}, kc) != nil || kc.Status.ObservedGeneration != kc.Generation {
			return false
		}
		for i := len(kc.Status.Conditions) - 1; i >= 0; i-- {
			if c := kc.Status.Conditions[i]; c.Type == mcfgv1.KubeletConfigAccepted {
				return c.Status == status
			}
		}
		return false
	})
	return kc
}

// waitRendered waits until the pool's target rendered config satisfies cond (files by path).
func waitRendered(t *testing.T, ctx context.Context, pool string, cond func(map[string]string) bool) {
	t.Helper()
	poll(t, ctx, "pool "+pool+"'s rendered config", func() bool {
		p := &mcfgv1.MachineConfigPool{}
		rendered := &mcfgv1.MachineConfig{}
		if k8sClient.Get(ctx, client.ObjectKey{Name: pool}, p) != nil || p.Spec.Configuration.Name == "" ||
			k8sClient.Get(ctx, client.ObjectKey{Name: p.Spec.Configuration.Name}, rendered) != nil {
			return false
		}
		return cond(mctest.Files(t, rendered))
	})
}

func poke(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	kc := &mcfgv1.KubeletConfig{}
	must(t, k8sClient.Get(ctx, client.ObjectKey{Name: name}, kc))
	kc.Annotations["test/poke"] = time.Now().String()
	must(t, k8sClient.Update(ctx, kc))
}

func equalConditions(a, b mcfgv1.KubeletConfigStatus) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

func poll(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
