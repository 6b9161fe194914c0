package kubeletconfig

import (
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/mco-dev/mco/internal/controller/generated"
	"github.com/mco-dev/mco/internal/kubeletconfig"
)

// writer writes a KubeletConfig's 99-<pool>-generated-kubelet[-N] MachineConfigs, as the
// ContainerRuntimeConfig controller writes its own.
func (r *Reconciler) writer() generated.Writer {
	return generated.Writer{Client: r.Client, Recorder: r.Recorder, Kind: "KubeletConfig", IsGeneratedName: kubeletconfig.IsGeneratedName}
}

func equalStatus(a, b mcfgv1.KubeletConfigStatus) bool {
	return equality.Semantic.DeepEqual(a, b)
}

func lastMessage(st mcfgv1.KubeletConfigStatus) string {
	if n := len(st.Conditions); n > 0 {
		return st.Conditions[n-1].Message
	}
	return ""
}
