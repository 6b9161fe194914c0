package machine

import (
	"strings"
)

// LoaderState is what the machine's boot loader keeps on its disk, outside the root file
// system: the image it booted last.
type LoaderState struct {
	Image string `json:"image"`
}

// BootChoice is what one boot presents to the machine.
type BootChoice struct {
	Image   string `json:"image"`
	Cmdline string `json:"cmdline"`
	// ConsumedStaged: the staged image was taken (the loader forgets the staging).
	ConsumedStaged bool `json:"-"`
}

// ChooseImage is the boot loader's decision, as ostree's on a real host: a staged image becomes
// the booted one; otherwise the last booted image boots again; a new disk boots the boot image.
func ChooseImage(bootImage string, last LoaderState, staged string) BootChoice {
	if s := strings.TrimSpace(staged); s != "" {
		return BootChoice{Image: s, ConsumedStaged: true}
	}
	if last.Image != "" {
		return BootChoice{Image: last.Image}
	}
	return BootChoice{Image: bootImage}
}

// Cmdline is the kernel command line to boot with: what the OS wrote for the next boot (one
// line, kernel-install's /etc/kernel/cmdline; newlines are spaces), else the default.
func Cmdline(written string, present bool) string {
	if !present {
		return DefaultCmdline
	}
	return strings.Join(strings.Fields(written), " ")
}
