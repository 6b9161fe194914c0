package containerruntime

import (
	"github.com/mco-dev/mco/internal/containerruntime"
	"github.com/mco-dev/mco/internal/controller/generated"
)

// writer writes a ContainerRuntimeConfig's 99-<pool>-generated-containerruntime[-N]
// MachineConfigs, as the KubeletConfig controller writes its own.
func (r *Reconciler) writer() generated.Writer {
	return generated.Writer{Client: r.Client, Recorder: r.Recorder, Kind: "ContainerRuntimeConfig", IsGeneratedName: containerruntime.IsGeneratedName}
}
