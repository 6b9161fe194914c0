package bootimage

import (
	"strings"
	"testing"
)

func TestHotLoopGuard(t *testing.T) {
	h := PatchHistory{}
	target := []byte(`{"ami":{"id":"ami-new"}}`)
	for i := 1; i <= HotLoopLimit; i++ {
		if v := h.Patch("a", target); !v.Allowed {
			t.Fatalf("patch %d refused", i)
		}
	}
	v := h.Patch("a", target)
	if v.Allowed || !v.FirstRefusal {
		t.Fatalf("patch %d: %+v, want the first refusal", HotLoopLimit+1, v)
	}
	if v := h.Patch("a", target); v.Allowed || v.FirstRefusal {
		t.Fatalf("later refusal: %+v", v)
	}
	if v := h.Patch("b", target); !v.Allowed {
		t.Fatal("another MachineSet is refused")
	}
	// A new release is a different patch: counting starts again.
	if v := h.Patch("a", []byte(`{"ami":{"id":"ami-newer"}}`)); !v.Allowed {
		t.Fatal("a new target is refused")
	}

	// The history survives a restart through its ConfigMap encoding.
	for i := 0; i < HotLoopLimit-1; i++ {
		h.Patch("a", []byte(`{"ami":{"id":"ami-newer"}}`))
	}
	restored := DecodePatchHistory(EncodePatchHistory(h))
	if v := restored.Patch("a", []byte(`{"ami":{"id":"ami-newer"}}`)); v.Allowed {
		t.Fatal("the count was lost across encode/decode")
	}
	restored.Retain(func(name string) bool { return name != "a" })
	if v := restored.Patch("a", []byte(`{"ami":{"id":"ami-newer"}}`)); !v.Allowed {
		t.Fatal("opting out did not clear the history")
	}
	if len(DecodePatchHistory(map[string]string{"x": "garbage"})) != 0 {
		t.Error("an unreadable record was kept")
	}
	if msg := HotLoopError("a").Error(); !strings.Contains(msg, "MachineSet a") || !strings.Contains(msg, "Partial") {
		t.Errorf("message does not tell the admin what to do: %s", msg)
	}
}
