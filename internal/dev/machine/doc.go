// Package machine runs a real systemd Linux machine on this host without a VM: systemd is PID 1
// of its own PID, mount, UTS, IPC and cgroup namespaces, its root (pivot_root, shared mount
// propagation) is an overlay of an OS image (the host's own OS plus an image layer) with a
// per-machine ext4 disk as the writable layer. With a Network (a dev cluster's machines), each
// boot also has a network namespace of its own, with one card the supervisor plugs in before the
// boot stage goes on (see Network); without one, the machine shares the host's network.
//
// Enough for a real kubelet and container runtime: the machine has its own cgroup tree in every
// hierarchy (mco-<name>-<hash of its directory>, below its supervisor's cgroups, removed when
// the machine ends), seen inside in the host's own layout (cgroupLayoutFor), and the kernel
// settings the kubelet would write to the host's /proc/sys are presented to it read-only instead.
//
// Everything above the boot loader and the network card runs for real inside the machine: Ignition (on first boot,
// before systemd, as an initramfs runs it; or, for a distribution's machine, a plain file set
// written as its installer would leave it), systemd, units, systemctl, reboots. The supervisor
// (Supervise) plays only firmware and boot loader: on each boot it takes the OS image the OS
// staged for the next boot (/boot/mco-dev/staged-image on the machine's disk) and the kernel
// command line the OS's boot tooling wrote (/etc/kernel/cmdline, as kernel-install reads it),
// and presents them (the image as the overlay's lower layer, the command line as /proc/cmdline).
// A reboot inside (reboot(2) in a PID namespace ends its init with SIGHUP) makes the
// supervisor boot the machine again; a power-off (SIGINT) stops it; a power loss is a SIGKILL of
// the machine's init, after which the supervisor boots it again.
//
// Layout of a machine directory:
//
//	machine.json    the Config
//	disk.img        the machine's disk (ext4): upper/ and work/ of the root overlay, loader/
//	user-data.ign   what a cloud would hand the machine as user data (a pointer Ignition config)
//	first-boot-files.json  instead, for a machine provisioned without Ignition: the files an
//	                installer leaves on its disk (ProvisionFiles)
//	status.json     written by the supervisor: state, boot count, init PID, booted image, cmdline
//	console.log     systemd's console
//	mnt/            mount points, used only inside the machine's mount namespace
package machine
