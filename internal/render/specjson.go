package render

import (
	"bytes"
	"encoding/json"
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
)

// configPlaceholder is how spec.config serialises while its raw bytes are left out.
var configPlaceholder = []byte(`"config":null`)

// marshalSpec is json.Marshal(spec) for a spec whose config json.Marshal wrote (compact, HTML
// characters escaped), without re-reading spec.config. encoding/json compacts what
// a Marshaler returns, so the rendered Ignition (nearly all of the spec, and already compact
// from json.Marshal) would be scanned byte by byte a second time; here the rest of the spec is
// serialised with config null and the raw bytes are put in its place. The first `"config":null`
// is config's: the fields before it are strings, and quotes inside a JSON string are escaped.
func marshalSpec(spec mcfgv1.MachineConfigSpec) ([]byte, error) {
	raw := spec.Config.Raw
	if len(raw) == 0 {
		return json.Marshal(spec)
	}
	rest := spec
	rest.Config.Raw = nil
	js, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	at := bytes.Index(js, configPlaceholder)
	if at < 0 {
		return nil, fmt.Errorf("serialising the rendered spec: no config field in %.80s", js)
	}
	out := make([]byte, 0, len(js)+len(raw))
	out = append(out, js[:at+len(`"config":`)]...)
	out = append(out, raw...)
	return append(out, js[at+len(configPlaceholder):]...), nil
}
