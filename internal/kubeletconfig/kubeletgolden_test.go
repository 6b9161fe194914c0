package kubeletconfig

import (
	"os"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/internal/kubeletfiles"
)

// The drop-in in generated-over-kubeadm is what the generator writes for its KubeletConfig.
func TestKubeletGoldenDropInIsGenerated(t *testing.T) {
	data, err := os.ReadFile("../kubeletfiles/testdata/kubelet/generated-over-kubeadm/kubeletconfig.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kc := &mcfgv1.KubeletConfig{}
	if err := yaml.UnmarshalStrict(data, kc); err != nil {
		t.Fatal(err)
	}
	files, err := generatedFiles(t, kc, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../kubeletfiles/testdata/kubelet/generated-over-kubeadm/config-dir/50-machineconfiguration.conf")
	if err != nil {
		t.Fatal(err)
	}
	if files[kubeletfiles.DropInPath] != string(want) {
		t.Errorf("the generator writes\n%s\nthe golden's drop-in is\n%s", files[kubeletfiles.DropInPath], want)
	}
}
