package drift

import "github.com/mco-dev/mco/internal/daemon/nodefiles"

// Blocking is the drift of the current config an update to next must not go past: all of it
// but paths that are missing and next no longer has. The update would only remove those
// (or put back their originals); nothing of anyone's is there to lose. A node whose file went
// missing (a tmpfs behind a link, emptied by a reboot) is then not stranded in a config its
// pool has left: deleting the MachineConfig that wrote the file brings it back.
func Blocking(found []*Error, next nodefiles.Set) []*Error {
	var out []*Error
	for _, d := range found {
		if _, kept := next.Lookup(d.Path); d.Missing && d.Unit == "" && !kept {
			continue
		}
		out = append(out, d)
	}
	return out
}
