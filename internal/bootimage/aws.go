package bootimage

import (
	"github.com/coreos/stream-metadata-go/stream"
)

// updateAWS sets ami.id to the stream's AMI for placement.region. An AMI chosen by ARN or by
// filters is the admin's own selection and is skipped.
//
// Unlike OpenShift, mco does not ask EC2 who owns the current AMI (that needs cloud
// credentials), so a MachineSet booting a custom AMI given by ID must be excluded through the
// MachineConfiguration's Partial selector.
func updateAWS(spec map[string]any, images stream.Arch, arch string) error {
	ami := object(spec, "ami")
	if id, _ := ami["id"].(string); id == "" {
		return skipf(SkipCustomImage, "the AMI is given by ARN or filters, not by ID")
	}
	region := stringAt(spec, "placement", "region")
	if region == "" {
		return skipf(SkipNoStreamImage, "providerSpec has no placement.region to choose an AMI by")
	}
	if images.Images.Aws == nil {
		return skipf(SkipNoStreamImage, "the stream has no AWS images for %s", arch)
	}
	img, ok := images.Images.Aws.Regions[region]
	if !ok || img.Image == "" {
		return skipf(SkipNoStreamImage, "the stream has no %s AMI in region %s", arch, region)
	}
	ami["id"] = img.Image
	return nil
}
