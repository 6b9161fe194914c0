package bootimage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/coreos/stream-metadata-go/stream"
)

// The providerSpec kinds of the Machine API's cloud providers.
const (
	kindAWS     = "AWSMachineProviderConfig"
	kindGCP     = "GCPMachineProviderSpec"
	kindAzure   = "AzureMachineProviderSpec"
	kindVSphere = "VSphereMachineProviderSpec"
)

// platformUpdate points spec (a decoded providerSpec, edited in place) at the stream's image for
// one platform, or returns a *Skip.
type platformUpdate func(spec map[string]any, images stream.Arch, arch string) error

var platformUpdates = map[string]platformUpdate{
	kindAWS:     updateAWS,
	kindGCP:     updateGCP,
	kindAzure:   updateAzure,
	kindVSphere: updateVSphere,
}

// UpdateProviderSpec returns raw, a MachineSet's providerSpec.value, pointed at the stream's boot
// image for arch (a stream architecture such as x86_64), and whether that changed anything.
// A *Skip error means the MachineSet must be left alone; any other error means raw is malformed.
//
// The providerSpec is edited as generic JSON, not through the Machine API's Go types: a field a
// newer Machine API added, or one the types would default, must survive untouched, since the
// patch mco sends is the difference between the two documents.
func UpdateProviderSpec(raw []byte, st *stream.Stream, arch string) (out []byte, changed bool, err error) {
	spec, err := decodeObject(raw)
	if err != nil {
		return nil, false, fmt.Errorf("providerSpec.value: %w", err)
	}
	kind, _ := spec["kind"].(string)
	update, ok := platformUpdates[kind]
	if !ok {
		return nil, false, skipf(SkipPlatform, "providerSpec kind %q has no boot image support", kind)
	}
	images, ok := st.Architectures[arch]
	if !ok {
		return nil, false, skipf(SkipArchitecture, "the stream has no %s images", arch)
	}
	if err := update(spec, images, arch); err != nil {
		return nil, false, err
	}
	return encodeIfChanged(raw, spec)
}

// encodeIfChanged marshals spec when it differs from the document raw holds.
func encodeIfChanged(raw []byte, spec map[string]any) ([]byte, bool, error) {
	original, err := decodeObject(raw)
	if err != nil {
		return nil, false, err
	}
	if reflect.DeepEqual(original, spec) {
		return raw, false, nil
	}
	out, err := json.Marshal(spec)
	return out, err == nil, err
}

// decodeObject keeps numbers as json.Number, so an integer such as a disk size comes back
// exactly as it was written.
func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return obj, nil
}

// object returns m[key] when it is a JSON object, else nil.
func object(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// stringAt follows keys through nested objects to a string; "" when any step is missing.
func stringAt(m map[string]any, keys ...string) string {
	for _, k := range keys[:len(keys)-1] {
		if m = object(m, k); m == nil {
			return ""
		}
	}
	s, _ := m[keys[len(keys)-1]].(string)
	return s
}
