package ignition

import (
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
)

// Kernel arguments came with spec 3.3: a config holding them suggests 3.3 when 3.2 fails, and
// nothing when no newer spec is servable.
func TestOldestServableAfter(t *testing.T) {
	cfg := Config{Ignition: types.Ignition{Version: "3.5.0"},
		KernelArguments: types.KernelArguments{ShouldExist: []types.KernelArgument{"nosmt"}}}
	if _, err := Convert(cfg, V3_2); err == nil {
		t.Fatal("kernel arguments converted to spec 3.2")
	}
	if v, ok := OldestServableAfter(cfg, V3_2); !ok || v != V3_3 {
		t.Errorf("OldestServableAfter(3.2) = %s, %v; want 3.3.0", v, ok)
	}
	if v, ok := OldestServableAfter(cfg, V3_5); ok {
		t.Errorf("OldestServableAfter(3.5) = %s; want none", v)
	}
}
