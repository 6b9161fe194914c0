package bootimage

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/coreos/stream-metadata-go/stream"
)

// ConfigMap coreos-bootimages, the golden source of boot images for the running release.
const (
	BootImagesConfigMap = "coreos-bootimages"
	// StreamKey holds the CoreOS stream metadata JSON.
	StreamKey = "stream"
	// ReleaseVersionKey holds the release the boot images belong to (informational).
	ReleaseVersionKey = "releaseVersion"
)

// ParseStream reads CoreOS stream metadata and checks it names at least one architecture, so an
// empty or truncated ConfigMap is an error instead of "no images anywhere". A field of the
// wrong type is named by its path ("architectures.x86_64.images.aws.regions.image").
func ParseStream(data string) (*stream.Stream, error) {
	if strings.TrimSpace(data) == "" {
		return nil, errors.New("stream metadata is empty")
	}
	var st stream.Stream
	if err := json.Unmarshal([]byte(data), &st); err != nil {
		return nil, streamError(data, err)
	}
	if len(st.Architectures) == 0 {
		return nil, errors.New("architectures: missing or empty: the stream metadata lists no architectures")
	}
	return &st, nil
}

// streamError names the field a decoding error is about. The decoder's path leaves out map
// keys, so a mismatch inside an architecture is found again by decoding each on its own.
func streamError(data string, err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("stream metadata is not valid JSON: %w", err)
	}
	var byArch struct {
		Architectures map[string]json.RawMessage `json:"architectures"`
	}
	if strings.HasPrefix(te.Field+".", "architectures.") && json.Unmarshal([]byte(data), &byArch) == nil {
		for name, raw := range byArch.Architectures {
			var arch stream.Arch
			var inner *json.UnmarshalTypeError
			if errors.As(json.Unmarshal(raw, &arch), &inner) {
				te = &json.UnmarshalTypeError{Value: inner.Value, Type: inner.Type, Field: strings.TrimSuffix("architectures."+name+"."+inner.Field, ".")}
				break
			}
		}
	}
	field := te.Field
	if field == "" {
		field = "stream metadata"
	}
	return fmt.Errorf("%s: got a JSON %s, want %s", field, te.Value, jsonWord(te.Type.Kind()))
}

// jsonWord names the JSON a Go kind decodes from.
func jsonWord(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct, reflect.Pointer:
		return "an object"
	}
	return "a number"
}

// Kubernetes architecture names (kubernetes.io/arch) mapped to the RPM names streams use.
var streamArchitectures = map[string]string{
	"amd64":   "x86_64",
	"arm64":   "aarch64",
	"s390x":   "s390x",
	"ppc64le": "ppc64le",
}

// StreamArchitecture maps a kubernetes.io/arch value to the stream's architecture key.
func StreamArchitecture(kubeArch string) (string, bool) {
	a, ok := streamArchitectures[kubeArch]
	return a, ok
}

// Machine API metadata the decision reads.
const (
	// AutoscalerLabelsAnnotation lists the labels the cluster autoscaler assumes a MachineSet's
	// nodes get, as "k=v,k=v"; kubernetes.io/arch there is the MachineSet's architecture.
	AutoscalerLabelsAnnotation = "capacity.cluster-autoscaler.kubernetes.io/labels"
	// OSIDLabel on a MachineSet's machine template is "Windows" for Windows machines.
	OSIDLabel   = "machine.openshift.io/os-id"
	archLabel   = "kubernetes.io/arch"
	windowsOSID = "Windows"
)

// kubeArchitecture returns the architecture a MachineSet declares through the autoscaler
// annotation, or "" when it declares none.
func kubeArchitecture(annotations map[string]string) string {
	for _, kv := range strings.Split(annotations[AutoscalerLabelsAnnotation], ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if ok && strings.TrimSpace(k) == archLabel {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
