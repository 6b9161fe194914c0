package render

import (
	"crypto/sha256"
	"encoding/hex"
)

// RenderedPrefix starts every rendered MachineConfig name.
const RenderedPrefix = "rendered-"

// nameFor is the content address of a rendered spec: rendered-<pool>-<32 hex digits of SHA-256 of
// the spec's JSON>. The pool name is not hashed, so identical pools get identical suffixes, and
// the JSON of the typed spec is deterministic, so the name is the same in every process and run.
// (OpenShift hashes a salted YAML with MD5; names are not bit-compatible, by choice.)
func nameFor(pool string, specJSON []byte) string {
	sum := sha256.Sum256(specJSON)
	return RenderedPrefix + pool + "-" + hex.EncodeToString(sum[:16])
}
