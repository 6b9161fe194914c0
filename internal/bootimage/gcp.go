package bootimage

import (
	"strings"

	"github.com/coreos/stream-metadata-go/stream"
)

// updateGCP points every boot disk at projects/<project>/global/images/<name> from the stream.
// A boot disk whose image lives in another project (an image the cluster or the admin
// uploaded) is custom, and the whole MachineSet is skipped.
func updateGCP(spec map[string]any, images stream.Arch, arch string) error {
	gcp := images.Images.Gcp
	if gcp == nil || gcp.Project == "" || gcp.Name == "" {
		return skipf(SkipNoStreamImage, "the stream has no GCP image for %s", arch)
	}
	target := "projects/" + gcp.Project + "/global/images/" + gcp.Name
	disks, _ := spec["disks"].([]any)
	var boot []map[string]any
	for _, d := range disks {
		disk, _ := d.(map[string]any)
		if isBoot, _ := disk["boot"].(bool); isBoot {
			boot = append(boot, disk)
		}
	}
	if len(boot) == 0 {
		return skipf(SkipCustomImage, "providerSpec has no boot disk")
	}
	// Check every boot disk before editing any, so a skip never leaves a half-edited spec.
	for _, disk := range boot {
		image, _ := disk["image"].(string)
		if project := gcpImageProject(image); project != gcp.Project {
			return skipf(SkipCustomImage, "boot disk image %q is not from project %s", image, gcp.Project)
		}
	}
	for _, disk := range boot {
		disk["image"] = target
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
