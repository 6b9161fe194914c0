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
func updateAWS(spec doc, images stream.Arch, arch string) error {
	ami, ok, err := spec.object("ami")
	if err != nil {
		return err
	}
	if !ok {
		return spec.missing("ami", "an AWS machine boots the AMI given there")
	}
	id, err := ami.str("id")
	if err != nil {
		return err
	}
	if id == "" {
		arn, err := ami.str("arn")
		if err != nil {
			return err
		}
		filters, err := ami.list("filters")
		if err != nil {
			return err
		}
		if arn == "" && len(filters) == 0 {
			return &FieldError{Field: ami.path, Reason: "has no id, arn or filters: an AWS machine needs one to find its AMI"}
		}
		return skipf(SkipCustomImage, "the AMI is given by ARN or filters, not by ID")
	}
	region, err := spec.strAt("placement", "region")
	if err != nil {
		return err
	}
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
	ami.m["id"] = img.Image
	return nil
}
