package render

import (
	"bytes"
	"encoding/json"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// marshalSpec must give exactly json.Marshal's bytes: the rendered name is their hash.
func TestMarshalSpecIsJSONMarshal(t *testing.T) {
	merged := map[string]any{"ignition": map[string]any{"version": "3.5.0"},
		"storage": map[string]any{"files": []any{map[string]any{"path": "/etc/a", "contents": map[string]any{"source": `data:,<a href="x">&amp;"config":null</a>`}}}}}
	raw, err := json.Marshal(merged)
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []mcfgv1.MachineConfigSpec{
		{Config: runtime.RawExtension{Raw: raw}},
		{OSImageURL: `quay.io/x@sha256:1 "config":null <&>`, BaseOSExtensionsContainerImage: "q/e", Config: runtime.RawExtension{Raw: raw},
			KernelArguments: []string{"a=1", `b="config":null`}, Extensions: []string{"usbguard"}, FIPS: true, KernelType: "realtime"},
		{KernelArguments: []string{"only"}},
	} {
		want, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("marshalSpec:\n%s\nwant json.Marshal's:\n%s", got, want)
		}
	}
}
