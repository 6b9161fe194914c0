package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
)

// RenderedPrefix starts every rendered MachineConfig name.
const RenderedPrefix = "rendered-"

// Name is the content address of a rendered spec: rendered-<pool>-<32 hex digits of SHA-256 of
// the spec's JSON>. The pool name is not hashed, so identical pools get identical suffixes, and
// the JSON of the typed spec is deterministic, so the name is the same in every process and run.
// (OpenShift hashes a salted YAML with MD5; names are not bit-compatible, by choice.)
func Name(pool string, spec mcfgv1.MachineConfigSpec) (string, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return RenderedPrefix + pool + "-" + hex.EncodeToString(sum[:16]), nil
}
