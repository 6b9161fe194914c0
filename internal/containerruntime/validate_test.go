package containerruntime

import (
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func config(name string, c mcfgv1.ContainerRuntimeConfiguration) *mcfgv1.ContainerRuntimeConfig {
	return &mcfgv1.ContainerRuntimeConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: mcfgv1.ContainerRuntimeConfigSpec{ContainerRuntimeConfig: &c}}
}

func q(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		c    mcfgv1.ContainerRuntimeConfiguration
		want []string // fields named, in order; none = valid
	}{
		{"empty", mcfgv1.ContainerRuntimeConfiguration{}, nil},
		{"pidsLimit 0 is no limit", mcfgv1.ContainerRuntimeConfiguration{PidsLimit: ptr.To[int64](0)}, nil},
		{"pidsLimit 20", mcfgv1.ContainerRuntimeConfiguration{PidsLimit: ptr.To[int64](20)}, nil},
		{"pidsLimit 19", mcfgv1.ContainerRuntimeConfiguration{PidsLimit: ptr.To[int64](19)}, []string{"pidsLimit"}},
		{"pidsLimit negative", mcfgv1.ContainerRuntimeConfiguration{PidsLimit: ptr.To[int64](-1)}, []string{"pidsLimit"}},
		{"logSizeMax exactly 8Ki is refused, as OpenShift", mcfgv1.ContainerRuntimeConfiguration{LogSizeMax: q("8Ki")}, []string{"logSizeMax"}},
		{"logSizeMax 8193", mcfgv1.ContainerRuntimeConfiguration{LogSizeMax: q("8193")}, nil},
		{"logSizeMax negative is unlimited", mcfgv1.ContainerRuntimeConfiguration{LogSizeMax: q("-1")}, nil},
		{"overlaySize negative", mcfgv1.ContainerRuntimeConfiguration{OverlaySize: q("-1G")}, []string{"overlaySize"}},
		{"logLevel", mcfgv1.ContainerRuntimeConfiguration{LogLevel: "verbose"}, []string{"logLevel"}},
		{"every log level", mcfgv1.ContainerRuntimeConfiguration{LogLevel: "trace"}, nil},
		{"defaultRuntime", mcfgv1.ContainerRuntimeConfiguration{DefaultRuntime: "kata"}, []string{"defaultRuntime"}},
		{"store paths", mcfgv1.ContainerRuntimeConfiguration{
			AdditionalLayerStores:    []mcfgv1.AdditionalLayerStore{{Path: "relative"}},
			AdditionalImageStores:    []mcfgv1.AdditionalImageStore{{Path: "/a//b"}},
			AdditionalArtifactStores: []mcfgv1.AdditionalArtifactStore{{Path: ""}, {Path: "/ok"}},
		}, []string{"additionalLayerStores[0].path", "additionalImageStores[0].path", "additionalArtifactStores[0].path"}},
		{"every problem at once", mcfgv1.ContainerRuntimeConfiguration{PidsLimit: ptr.To[int64](1), LogLevel: "x", DefaultRuntime: "y"},
			[]string{"pidsLimit", "logLevel", "defaultRuntime"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(config("c", tc.c))
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("error %v, want *Error", err)
			}
			if len(e.Problems) != len(tc.want) {
				t.Fatalf("problems %+v, want fields %v", e.Problems, tc.want)
			}
			for i, f := range tc.want {
				if e.Problems[i].Field != specField+"."+f {
					t.Errorf("problem %d names %s, want %s", i, e.Problems[i].Field, f)
				}
			}
			if !strings.HasPrefix(err.Error(), "ContainerRuntimeConfig c: spec.containerRuntimeConfig.") {
				t.Errorf("message %q does not start with the object and field", err)
			}
		})
	}
}
