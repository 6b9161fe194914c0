package bootimage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// HotLoopLimit is how often mco patches one MachineSet to the same providerSpec. Needing the
// same patch again after that means something keeps reverting it (Hive's MachinePool
// controller with its platform back door, a GitOps tool): fighting it would churn forever.
const HotLoopLimit = 3

// PatchRecord is what the guard remembers about one MachineSet.
type PatchRecord struct {
	// Target is the digest of the providerSpec mco last patched the MachineSet to.
	Target string `json:"target"`
	// Patches counts patches to Target.
	Patches int `json:"patches"`
	// Refused is set once the guard stopped patching, so the refusal is announced once.
	Refused bool `json:"refused,omitempty"`
}

// PatchHistory is the hot-loop guard's memory, by MachineSet name.
type PatchHistory map[string]PatchRecord

// Verdict is the guard's answer to "may I patch this MachineSet to this providerSpec?".
type Verdict struct {
	Allowed bool
	// FirstRefusal is true the first time a patch is refused, for a one-off event.
	FirstRefusal bool
}

// Patch records the intent to patch machineSet to providerSpec and says whether it is allowed.
// A different target (a new release, an admin's edit elsewhere in the spec) starts counting
// afresh; the same target beyond HotLoopLimit is refused.
func (h PatchHistory) Patch(machineSet string, providerSpec []byte) Verdict {
	target := digest(providerSpec)
	rec := h[machineSet]
	switch {
	case rec.Target != target:
		h[machineSet] = PatchRecord{Target: target, Patches: 1}
		return Verdict{Allowed: true}
	case rec.Patches < HotLoopLimit:
		rec.Patches++
		h[machineSet] = rec
		return Verdict{Allowed: true}
	}
	first := !rec.Refused
	rec.Refused = true
	h[machineSet] = rec
	return Verdict{FirstRefusal: first}
}

// Retain forgets every MachineSet keep rejects (opted out, deleted): opting a MachineSet out
// and back in is how an admin clears a hot-loop refusal.
func (h PatchHistory) Retain(keep func(machineSet string) bool) {
	for name := range h {
		if !keep(name) {
			delete(h, name)
		}
	}
}

// HotLoopError is the refusal reported in the Degraded condition.
func HotLoopError(machineSet string) error {
	return fmt.Errorf("refusing to patch MachineSet %s: it needed the same boot image patch more than %d times, so something keeps reverting it; "+
		"exclude it from boot image updates (a Partial selector that does not match it, or mode None), fix the workflow that manages it, then opt it back in",
		machineSet, HotLoopLimit)
}

// EncodePatchHistory stores the history as ConfigMap data: one JSON record per MachineSet.
func EncodePatchHistory(h PatchHistory) map[string]string {
	data := make(map[string]string, len(h))
	for name, rec := range h {
		b, _ := json.Marshal(rec)
		data[name] = string(b)
	}
	return data
}

// DecodePatchHistory reads EncodePatchHistory's output; unreadable records are dropped (the
// worst outcome is HotLoopLimit more patches).
func DecodePatchHistory(data map[string]string) PatchHistory {
	h := make(PatchHistory, len(data))
	for name, s := range data {
		var rec PatchRecord
		if json.Unmarshal([]byte(s), &rec) == nil {
			h[name] = rec
		}
	}
	return h
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}
