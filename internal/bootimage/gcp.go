package bootimage

import (
	"strings"

	"github.com/coreos/stream-metadata-go/stream"
)

// updateGCP points every boot disk at projects/<project>/global/images/<name> from the stream.
// A boot disk whose image lives in another project (an image the cluster or the admin
// uploaded) is custom, and the whole MachineSet is skipped.
func updateGCP(spec doc, images stream.Arch, arch string) error {
	gcp := images.Images.Gcp
	if gcp == nil || gcp.Project == "" || gcp.Name == "" {
		return skipf(SkipNoStreamImage, "the stream has no GCP image for %s", arch)
	}
	target := "projects/" + gcp.Project + "/global/images/" + gcp.Name
	disks, err := spec.list("disks")
	if err != nil {
		return err
	}
	if len(disks) == 0 {
		return spec.missing("disks", "a GCP machine boots from the disk marked boot")
	}
	var boot []doc
	for i := range disks {
		disk, err := spec.item("disks", disks, i)
		if err != nil {
			return err
		}
		isBoot, err := disk.boolean("boot")
		if err != nil {
			return err
		}
		if !isBoot {
			continue
		}
		if _, err := disk.str("image"); err != nil {
			return err
		}
		boot = append(boot, disk)
	}
	if len(boot) == 0 {
		return skipf(SkipCustomImage, "providerSpec has no boot disk")
	}
	// Check every boot disk before editing any, so a skip never leaves a half-edited spec.
	for _, disk := range boot {
		image, _ := disk.m["image"].(string)
		if project := gcpImageProject(image); project != gcp.Project {
			return skipf(SkipCustomImage, "boot disk image %q is not from project %s", image, gcp.Project)
		}
	}
	for _, disk := range boot {
		disk.m["image"] = target
	}
	return nil
}

// gcpImageProject returns P of ".../projects/P/global/images/...", in short or URL form; "" for
// a bare image name, which refers to the cluster's own project.
func gcpImageProject(image string) string {
	i := strings.Index(image, "projects/")
	if i < 0 {
		return ""
	}
	project, rest, ok := strings.Cut(image[i+len("projects/"):], "/")
	if !ok || !strings.HasPrefix(rest, "global/images/") {
		return ""
	}
	return project
}
