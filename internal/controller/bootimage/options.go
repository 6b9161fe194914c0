package bootimage

import "github.com/coreos/go-semver/semver"

// Options configure the boot image controller.
type Options struct {
	// MachineAPINamespace holds the MachineSets and their user-data Secrets.
	MachineAPINamespace string
	// BootImagesNamespace holds ConfigMap coreos-bootimages and the controller's patch history.
	BootImagesNamespace string
	// DefaultArchitecture (kubernetes.io/arch) of MachineSets that declare none.
	DefaultArchitecture string
	// UseManagedUserData points MachineSets at <role>-user-data-managed instead of upgrading
	// their spec 2 stubs in place.
	UseManagedUserData bool
	// StubSpecVersion is the spec upgraded stubs are written in.
	StubSpecVersion semver.Version
}

// PatchHistoryConfigMap, in BootImagesNamespace, is the hot-loop guard's memory. It lives in an
// object of mco's own rather than in the process (a restart or leader change would reset the
// count, and flip BootImageUpdateDegraded back to False until three more reverts) or on the
// MachineSet (the very tool that reverts the patch may revert an annotation too).
const PatchHistoryConfigMap = "machine-set-boot-image-history"
