package pinnedimages

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"k8s.io/apimachinery/pkg/api/resource"
)

// DefaultMinFree is what must stay free of the node's allocatable ephemeral storage after the
// images are pulled: OpenShift's MinFreeStorageAfterPrefetch. The agent's --pinned-images-min-free
// changes it.
var DefaultMinFree = resource.MustParse("16Gi")

// Storage is what the disk guard knows of a node before pulling a set.
type Storage struct {
	// Allocatable is the Node's status.allocatable ephemeral-storage; Known is false when the
	// kubelet reports none.
	Allocatable resource.Quantity
	Known       bool
	// MinFree must stay free after the pulls.
	MinFree resource.Quantity
	// Missing is the compressed size of the set's layers the node does not have (each layer
	// counted once), from the registry's manifests.
	Missing int64
}

// CheckStorage is OpenShift's disk guard: the node must have at least MinFree allocatable, and
// twice the compressed size of what is missing (room to unpack it) must fit below allocatable
// minus MinFree. The error says which, with the numbers.
func CheckStorage(s Storage) error {
	if !s.Known {
		return fmt.Errorf("the node reports no allocatable ephemeral storage, so the disk guard cannot tell whether %s stays free", s.MinFree.String())
	}
	if s.Allocatable.Cmp(s.MinFree) < 0 {
		return fmt.Errorf("not enough storage: the node has %s allocatable ephemeral storage, less than the %s that must stay free after pulling", human(s.Allocatable.Value()), s.MinFree.String())
	}
	room := s.Allocatable.Value() - s.MinFree.Value()
	if need := 2 * s.Missing; need >= room {
		return fmt.Errorf("not enough storage: the missing images are %s compressed, about %s unpacked, and only %s may be used (%s allocatable, %s must stay free)",
			human(s.Missing), human(need), human(room), human(s.Allocatable.Value()), s.MinFree.String())
	}
	return nil
}

// human is n bytes for a person: "3.8Gi", "512Mi", "900 bytes".
func human(n int64) string {
	units := []string{"Ki", "Mi", "Gi", "Ti", "Pi"}
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	f := float64(n)
	i := -1
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + units[i]
}

// CRIOPinnedImagesDropIn is where OpenShift's agent pins images for CRI-O.
const CRIOPinnedImagesDropIn = "/etc/crio/crio.conf.d/50-pinned-images"

// CRIODropIn is the drop-in pinning images ([crio.image] pinned_images), as OpenShift's agent
// encodes it; nil when there is none to pin (the file is removed).
func CRIODropIn(images []string) ([]byte, error) {
	if len(images) == 0 {
		return nil, nil
	}
	var conf struct {
		Crio struct {
			Image struct {
				PinnedImages []string `toml:"pinned_images,omitempty"`
			} `toml:"image"`
		} `toml:"crio"`
	}
	conf.Crio.Image.PinnedImages = images
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(conf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// MinContainerd is the first containerd whose CRI reports an image labelled
// io.cri-containerd.pinned=pinned as pinned to the kubelet, whose image garbage collection then
// leaves it alone.
const MinContainerd = "1.7.0"

// CanPin says whether the runtime the kubelet names (runtimeName and version as the CRI's
// Version call gives them: "containerd" "v2.4.2", "cri-o" "1.33.2") can pin images; the error
// names the runtime, its version and what is needed.
func CanPin(runtimeName, version string) error {
	switch runtimeName {
	case "cri-o":
		return nil
	case "containerd":
		major, minor, ok := majorMinor(version)
		if !ok {
			return fmt.Errorf("the node's container runtime is containerd %q, a version mco cannot read; pinning images needs containerd %s or later", version, MinContainerd)
		}
		if major < 1 || major == 1 && minor < 7 {
			return fmt.Errorf("the node's container runtime is containerd %s, which cannot pin images (its CRI reports no image as pinned to the kubelet's image garbage collection); pinning images needs containerd %s or later", strings.TrimPrefix(version, "v"), MinContainerd)
		}
		return nil
	}
	return fmt.Errorf("the node's container runtime is %s %s; mco pins images with containerd (%s or later) and CRI-O only", runtimeName, version, MinContainerd)
}

// majorMinor reads "v1.7.2", "1.6.20~ds1" or "2.4.2+unknown".
func majorMinor(v string) (major, minor int, ok bool) {
	v = strings.TrimPrefix(v, "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minorDigits := strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' })
	minor, err2 := strconv.Atoi(minorDigits)
	return major, minor, err1 == nil && err2 == nil
}
