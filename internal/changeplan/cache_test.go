package changeplan

import (
	"testing"

	"github.com/mco-dev/mco/internal/daemon/plan"
)

// A plan is reused for the same pool, configs (by resourceVersion) and policy, and made afresh
// when any of them changes.
func TestCacheReusesPlansUntilAnInputChanges(t *testing.T) {
	file := func(content string) map[string]any {
		return files(map[string]any{"path": "/etc/cached.conf", "contents": map[string]any{"source": "data:," + content}, "mode": 420})
	}
	current, target := mc(t, "rendered-worker-1", file("a")), mc(t, "rendered-worker-2", file("b"))
	current.ResourceVersion, target.ResourceVersion = "1", "1"
	defaults := Policies{Policies: plan.DefaultPolicies(), Key: "defaults"}
	var c Cache
	first, err := c.Between("worker", current, target, defaults)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Reboot {
		t.Fatalf("a file no policy covers: %+v, want a reboot", first)
	}
	if again, _ := c.Between("worker", current, target, defaults); again != first {
		t.Error("the same inputs were planned again")
	}
	edited := target.DeepCopy()
	edited.ResourceVersion = "2"
	policies := Policies{Policies: plan.DefaultPolicies(), Key: "uid/2"}
	for what, got := range map[string]func() (*Plan, error){
		"another pool":           func() (*Plan, error) { return c.Between("infra", current, target, defaults) },
		"the target edited":      func() (*Plan, error) { return c.Between("worker", current, edited, defaults) },
		"the policies changed":   func() (*Plan, error) { return c.Between("worker", current, target, policies) },
		"another current config": func() (*Plan, error) { return c.Between("worker", target, current, defaults) },
	} {
		p, err := got()
		if err != nil {
			t.Fatal(err)
		}
		if p == first {
			t.Errorf("%s: the cached plan was reused", what)
		}
	}
}
