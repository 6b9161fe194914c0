package bootimage

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coreos/go-semver/semver"

	"github.com/mco-dev/mco/internal/ignition"
)

// StubSpecVersion is the spec an upgraded pointer config is written in: 3.1, the first spec 3
// (RHCOS 4.6) and so the one every spec 3 boot image reads; everything a spec 2.2 pointer can
// say (merge source, CA, timeouts) fits in it.
var StubSpecVersion = ignition.V3_1

// UpgradeStub translates a spec 2.x pointer Ignition config (the installer's user-data of
// clusters born before OpenShift 4.6) to spec target: a current boot image's Ignition reads
// only spec 3. config.append becomes config.merge; the CA and everything else is kept. out is
// nil when nothing needs doing: the config is already spec 3, or the user data is not an
// Ignition config at all (a cloud-init script). from is the version found.
func UpgradeStub(userData []byte, target semver.Version) (out []byte, from string, err error) {
	var probe struct {
		Ignition *struct {
			Version string `json:"version"`
		} `json:"ignition"`
	}
	if json.Unmarshal(userData, &probe) != nil || probe.Ignition == nil {
		return nil, "", nil
	}
	from = probe.Ignition.Version
	switch {
	case strings.HasPrefix(from, "3."):
		return nil, from, nil
	case !strings.HasPrefix(from, "2."):
		return nil, from, fmt.Errorf("pointer config has unsupported Ignition version %q", from)
	}
	cfg, err := ignition.Parse(userData)
	if err != nil {
		return nil, from, fmt.Errorf("parsing spec %s pointer config: %w", from, err)
	}
	out, err = ignition.Convert(cfg, target)
	if err != nil {
		return nil, from, err
	}
	// Never write a config Ignition would reject: a machine booting it would fail for good.
	if _, err := ignition.Parse(out); err != nil {
		return nil, from, fmt.Errorf("upgraded pointer config is invalid: %w", err)
	}
	return out, from, nil
}
