package registries

import (
	"encoding/json"
	"fmt"
	"strings"

	strictjson "sigs.k8s.io/json"
)

// PolicyJSONPath is containers/image's signature policy, which CRI-O consults on every pull.
const PolicyJSONPath = "/etc/containers/policy.json"

// The types below are containers/image's signature.Policy as it reads and writes JSON. mco
// cannot import that package: it links gpgme through cgo, and mco is built with CGO_ENABLED=0.
// OpenShift decodes the base into those types and re-encodes the whole policy with
// encoding/json's MarshalIndent; these have the same keys, order and encoder. The two
// requirement types the generator writes (insecureAcceptAnything, reject) are encoded from
// scratch as there; the others (signedBy, signedBaseLayer, sigstoreSigned), which only a base
// can contain, are kept as written, with their keys in the base's order, where containers/image
// would re-encode them in its own field order and fill in defaults (see docs/generated-configs.md).
type policy struct {
	Default    requirements               `json:"default"`
	Transports map[string]transportScopes `json:"transports"`
}

type transportScopes map[string]requirements

type requirements []requirement

type requirement struct {
	Type string
	// raw is the requirement as written in the base, for types other than the two simple ones.
	raw json.RawMessage
}

const (
	typeInsecureAcceptAnything = "insecureAcceptAnything"
	typeReject                 = "reject"
)

var requirementTypes = []string{typeInsecureAcceptAnything, typeReject, "signedBy", "signedBaseLayer", "sigstoreSigned"}

func (r requirement) MarshalJSON() ([]byte, error) {
	if r.raw != nil {
		return r.raw, nil
	}
	return json.Marshal(struct {
		Type string `json:"type"`
	}{r.Type})
}

func (r *requirement) UnmarshalJSON(data []byte) error {
	var fields map[string]json.RawMessage
	if err := strictUnmarshal(data, &fields); err != nil {
		return err
	}
	var typ string
	if err := json.Unmarshal(fields["type"], &typ); err != nil || typ == "" {
		return fmt.Errorf("a requirement needs a \"type\", one of %s", strings.Join(requirementTypes, ", "))
	}
	switch typ {
	case typeInsecureAcceptAnything, typeReject:
		if len(fields) != 1 {
			return fmt.Errorf("a %q requirement takes no other keys", typ)
		}
		*r = requirement{Type: typ}
	case "signedBy", "signedBaseLayer", "sigstoreSigned":
		*r = requirement{Type: typ, raw: append(json.RawMessage(nil), data...)}
	default:
		return fmt.Errorf("unknown requirement type %q (one of %s)", typ, strings.Join(requirementTypes, ", "))
	}
	return nil
}

func (rs *requirements) UnmarshalJSON(data []byte) error {
	var list []requirement
	if err := strictUnmarshal(data, &list); err != nil {
		return err
	}
	if len(list) == 0 {
		return fmt.Errorf("a list of requirements must not be empty")
	}
	*rs = list
	return nil
}

// strictUnmarshal refuses unknown and repeated keys, as containers/image's parser does.
func strictUnmarshal(data []byte, v any) error {
	strict, err := strictjson.UnmarshalStrict(data, v)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return strict[0]
	}
	return nil
}

func decodePolicy(data []byte) (*policy, error) {
	p := &policy{}
	if err := strictUnmarshal(data, p); err != nil {
		return nil, err
	}
	if p.Default == nil {
		return nil, fmt.Errorf("\"default\" is missing")
	}
	if p.Transports == nil {
		p.Transports = map[string]transportScopes{}
	}
	return p, nil
}

// policyJSON rewrites base so that blocked scopes are rejected (everything else accepted) or
// only allowed scopes are accepted, for the docker transport and, for scopes it can express
// (fewer than three slashes), the atomic one; both replace what base has for them.
func policyJSON(base []byte, blocked, allowed []string) ([]byte, error) {
	p, err := decodePolicy(base)
	if err != nil {
		return nil, fmt.Errorf("decoding the base policy.json: %w", err)
	}
	scopes := transportScopes{}
	if len(allowed) > 0 {
		p.Default = requirements{{Type: typeReject}}
		for _, s := range allowed {
			scopes[s] = requirements{{Type: typeInsecureAcceptAnything}}
		}
	}
	if len(blocked) > 0 {
		p.Default = requirements{{Type: typeInsecureAcceptAnything}}
		for _, s := range blocked {
			scopes[s] = requirements{{Type: typeReject}}
		}
	}
	if len(scopes) > 0 {
		p.Transports["docker"] = scopes
		atomic := transportScopes{}
		for s, r := range scopes {
			if strings.Count(s, "/") < 3 {
				atomic[s] = r
			}
		}
		p.Transports["atomic"] = atomic
	}
	return json.MarshalIndent(p, "", "  ")
}
