// Package noderoot reads and writes files of a node's root file system mounted at some
// directory (`/` on the host, `/rootfs` in a pod, a temp dir in tests).
//
// Every path is resolved inside the root the way the node itself would resolve it: a symlink
// anywhere in a parent position, absolute or relative with any number of "..", cannot lead
// outside the root (openat2 RESOLVE_IN_ROOT, or its emulation, through
// github.com/cyphar/filepath-securejoin). The last component is never followed: writes replace
// it with rename, removals unlink it, reads refuse a symlink there.
package noderoot
