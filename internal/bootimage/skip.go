package bootimage

import "fmt"

// SkipReason says why a MachineSet is left alone. Skipped MachineSets are counted and reported,
// never patched, and are not errors: the admin chose (or the cloud forces) something mco must
// not overwrite.
type SkipReason string

const (
	// SkipOwned: the MachineSet has ownerReferences, so another controller (Hive, Cluster API,
	// a GitOps tool) manages it and would fight the patch.
	SkipOwned SkipReason = "OwnedByAnotherController"
	// SkipWindows: Windows machines do not boot CoreOS.
	SkipWindows SkipReason = "WindowsMachineSet"
	// SkipArchitecture: the declared architecture is unknown, or the stream has no images for it.
	SkipArchitecture SkipReason = "UnsupportedArchitecture"
	// SkipPlatform: mco cannot update boot images on this platform (vSphere, bare metal, ...).
	SkipPlatform SkipReason = "UnsupportedPlatform"
	// SkipCustomImage: the current image is not a CoreOS image from the stream's publisher
	// (an AMI by ARN or filters, an image of another GCP project, an uploaded Azure image).
	SkipCustomImage SkipReason = "CustomImage"
	// SkipNoStreamImage: the stream publishes no image for this region or variant.
	SkipNoStreamImage SkipReason = "NoImageInStream"
)

// Skip is a decision not to touch a MachineSet, with the details an admin needs.
type Skip struct {
	Reason SkipReason
	Detail string
}

func (s *Skip) Error() string { return fmt.Sprintf("%s: %s", s.Reason, s.Detail) }

func skipf(reason SkipReason, format string, args ...any) *Skip {
	return &Skip{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}
