package kubeletconfig

import (
	"slices"
	"testing"

	"github.com/mco-dev/mco/internal/kubeletfiles"
)

const kcHead = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

// What the generator writes is in effect once the kubelet reads it last, and not before.
func TestGeneratedDropInSatisfiedOnceRead(t *testing.T) {
	kc := kubeletConfig(t, "spec:\n  "+workerSelector+"\n  logLevel: 4\n  tlsSecurityProfile: {type: Modern}\n  kubeletConfig: {maxPods: 100, evictionHard: {memory.available: 200Mi}, protectKernelDefaults: false, systemReserved: {memory: 1Gi}}")
	dropIn, err := dropIn(kc)
	if err != nil {
		t.Fatal(err)
	}
	kubeadm := []byte(kcHead + "maxPods: 110\nprotectKernelDefaults: true\nevictionHard: {nodefs.available: 10%}\nstaticPodPath: /etc/kubernetes/manifests\n")
	before, err := kubeletfiles.Effective(kubeadm, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := kubeletfiles.Satisfies(before, dropIn); len(got) != 7 {
		t.Errorf("before the drop-in is read: %q, want all 7 settings missing", got)
	}
	after, err := kubeletfiles.Effective(kubeadm, map[string][]byte{"50-machineconfiguration.conf": dropIn, "10-host.conf": []byte(kcHead + "maxPods: 20\n")})
	if err != nil {
		t.Fatal(err)
	}
	if got := kubeletfiles.Satisfies(after, dropIn); got != nil {
		t.Errorf("after: %q not in effect", got)
	}
	overridden, err := kubeletfiles.Effective(kubeadm, map[string][]byte{"50-machineconfiguration.conf": dropIn, "60-host.conf": []byte(kcHead + "maxPods: 20\n")})
	if err != nil {
		t.Fatal(err)
	}
	if got := kubeletfiles.Satisfies(overridden, dropIn); !slices.Equal(got, []string{"maxPods"}) {
		t.Errorf("with a later host drop-in: %q, want maxPods", got)
	}
}
