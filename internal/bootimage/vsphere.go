package bootimage

import "github.com/coreos/stream-metadata-go/stream"

// updateVSphere skips: a vSphere boot image is a VM template that has to be imported from the
// stream's OVA through the vCenter API, which mco does not call.
func updateVSphere(map[string]any, stream.Arch, string) error {
	return skipf(SkipPlatform, "vSphere boot images are VM templates imported through vCenter; mco does not manage them")
}
