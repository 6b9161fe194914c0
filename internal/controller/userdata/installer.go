package userdata

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrSeveralCAs: an installer pointer config trusting more than one CA was customised by
// someone; which entry to replace cannot be known, so it is left for a human.
var ErrSeveralCAs = errors.New("pointer config trusts more than one CA; not rotating it automatically")

// ErrNotPointerConfig: the Secret's userData is not an Ignition config (e.g. a cloud-init script).
var ErrNotPointerConfig = errors.New("userData is not an Ignition config")

// RotateInstallerCA replaces the single CA of an installer-made pointer config with bundle. It
// edits the JSON generically, so the config's spec version (2.2 or 3.x) and every other field
// stay exactly as the installer wrote them. changed is false when the CA is already current.
func RotateInstallerCA(userData, bundle []byte) (out []byte, changed bool, err error) {
	var doc map[string]any
	if err := json.Unmarshal(userData, &doc); err != nil {
		return nil, false, ErrNotPointerConfig
	}
	ign, ok := doc["ignition"].(map[string]any)
	if !ok {
		return nil, false, ErrNotPointerConfig
	}
	security, _ := ign["security"].(map[string]any)
	tls, _ := security["tls"].(map[string]any)
	cas, _ := tls["certificateAuthorities"].([]any)
	switch {
	case len(cas) == 0:
		// Nothing trusted explicitly: the installer did not pin a CA, nothing to rotate.
		return userData, false, nil
	case len(cas) > 1:
		return nil, false, ErrSeveralCAs
	}
	ca, ok := cas[0].(map[string]any)
	if !ok {
		return nil, false, fmt.Errorf("certificateAuthorities[0] is not an object")
	}
	want := caDataURL(bundle)
	if ca["source"] == want {
		return userData, false, nil
	}
	ca["source"] = want
	// A verification hash pins the old bundle; it would make Ignition reject the new one.
	delete(ca, "verification")
	out, err = json.Marshal(doc)
	return out, err == nil, err
}
