//go:build !failpoints

package failpoint

// Enabled says whether this build has the failpoints: it does not (built without BuildTag).
const Enabled = false

// Load does nothing: this build cannot be armed, and an ArmFile left on the node stays
// where it is, unread.
func Load(nodeRoot string) error { return nil }

// Hit does nothing; the compiler inlines the empty call away.
func Hit() {}
