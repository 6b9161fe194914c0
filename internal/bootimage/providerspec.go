package bootimage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// one platform, or returns a *Skip, or a *FieldError for a field it cannot read.
type platformUpdate func(spec doc, images stream.Arch, arch string) error

var platformUpdates = map[string]platformUpdate{
	kindAWS:     updateAWS,
	kindGCP:     updateGCP,
	kindAzure:   updateAzure,
	kindVSphere: updateVSphere,
}

// UpdateProviderSpec returns raw, a MachineSet's providerSpec.value, pointed at the stream's boot
// image for arch (a stream architecture such as x86_64), and whether that changed anything.
// A *Skip error means the MachineSet must be left alone; any other error (a *FieldError naming
// the field) means raw is malformed.
//
// The providerSpec is edited as generic JSON, not through the Machine API's Go types: a field a
// newer Machine API added, or one the types would default, must survive untouched, since the
// patch mco sends is the difference between the two documents.
func UpdateProviderSpec(raw []byte, st *stream.Stream, arch string) (out []byte, changed bool, err error) {
	m, err := decodeObject(raw)
	if err != nil {
		return nil, false, &FieldError{Field: ProviderSpecField, Reason: err.Error()}
	}
	spec := doc{m: m, path: ProviderSpecField}
	kind, err := spec.str("kind")
	if err != nil {
		return nil, false, err
	}
	if kind == "" {
		return nil, false, spec.missing("kind", "a providerSpec's kind says which cloud's fields it holds")
	}
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
	return encodeIfChanged(raw, m)
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
// exactly as it was written. Anything after the object is an error, not ignored.
func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not JSON: data after the object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("got %s, want an object", jsonType(v))
	}
	return obj, nil
}
