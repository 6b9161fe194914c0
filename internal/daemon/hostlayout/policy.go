package hostlayout

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
)

// PolicyJSONPath is containers/image's trust policy, which CRI-O enforces on every pull.
const PolicyJSONPath = "/etc/containers/policy.json"

// acceptAnything is the one policy requirement that restricts nothing.
const acceptAnything = "insecureAcceptAnything"

// pullTransports are the transports of the kubelet's pulls: CRI-O checks a pull against the
// docker transport's scopes (atomic is its old name) and the default.
var pullTransports = []string{"docker", "atomic"}

// policyRestrictions lists what policy.json restricts for the kubelet's pulls ("default:
// reject", "docker quay.io: signedBy"): image.config's allowedRegistries, a
// ClusterImagePolicy's signatures. containerd does not enforce policy.json, so on a containerd
// node they would be reported in effect and not be; a file that cannot be read restricts
// nothing this check can vouch for, and is left to the config's own validation.
func policyRestrictions(set nodefiles.Set) []string {
	e, ok := set.Lookup(PolicyJSONPath)
	if !ok || e.Link != "" {
		return nil
	}
	type requirement struct {
		Type string `json:"type"`
	}
	var policy struct {
		Default    []requirement                       `json:"default"`
		Transports map[string]map[string][]requirement `json:"transports"`
	}
	if json.Unmarshal(e.Data, &policy) != nil {
		return nil
	}
	var found []string
	check := func(scope string, reqs []requirement) {
		for _, r := range reqs {
			if r.Type != acceptAnything {
				found = append(found, scope+": "+r.Type)
			}
		}
	}
	check("default", policy.Default)
	for _, transport := range pullTransports {
		scopes := policy.Transports[transport]
		names := make([]string, 0, len(scopes))
		for name := range scopes {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			check(strings.TrimSpace(transport+" "+name), scopes[name])
		}
	}
	return found
}

func policyError(restrictions []string) error {
	return fmt.Errorf("%s restricts the kubelet's pulls (%s), which containerd does not enforce (it never reads the file): "+
		"the restriction would be reported in effect and not be; remove it (image.config allowedRegistries, signature policies) "+
		"for this pool, or run CRI-O", PolicyJSONPath, strings.Join(restrictions, "; "))
}
