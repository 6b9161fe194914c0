package bootimage

import "github.com/coreos/stream-metadata-go/stream"

// updateVSphere skips: a vSphere boot image is a VM template that has to be imported from the
// stream's OVA through the vCenter API, which mco does not call.
// A template of the wrong type is still reported: the spec is malformed whoever manages it.
func updateVSphere(spec doc, _ stream.Arch, _ string) error {
	if _, err := spec.str("template"); err != nil {
		return err
	}
	return skipf(SkipPlatform, "vSphere boot images are VM templates imported through vCenter; mco does not manage them")
}
