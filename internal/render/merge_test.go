package render

import (
	"math/rand/v2"
	"reflect"
	"testing"

	v3_5 "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"k8s.io/utils/ptr"

	"github.com/mco-dev/mco/internal/ignition"
)

// TestMergingNothingIsACopy: mergeIgnition skips the library's merge for a config that
// holdsNothing, which is right only if merging such a config into any parent the fold can
// have (the empty config, or a merge result) gives the parent back, field for field.
func TestMergingNothingIsACopy(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 2))
	nothing := ignition.Empty()
	if !holdsNothing(nothing) {
		t.Fatal("the empty config does not hold nothing")
	}
	parents := []ignition.Config{ignition.Empty()}
	for range 300 {
		rest := randomConfig(r)
		rest.Storage.Files, rest.Storage.Directories, rest.Storage.Links, rest.Systemd.Units = nil, nil, nil, nil
		if r.IntN(2) == 0 {
			rest.KernelArguments.ShouldExist = []types.KernelArgument{"quiet"}
		}
		if r.IntN(3) == 0 {
			rest.Ignition.Proxy.HTTPProxy = ptr.To("http://proxy:3128")
		}
		parents = append(parents, v3_5.Merge(parents[r.IntN(len(parents))], rest))
	}
	for i, parent := range parents {
		if got := v3_5.Merge(parent, nothing); !reflect.DeepEqual(got, parent) {
			t.Fatalf("parent %d: merging nothing gave\n%+v\nwant\n%+v", i, got, parent)
		}
	}
}

// holdsNothing is true of the empty config only (which TestMergingNothingIsACopy merges), not
// of configs that differ from it only in an empty present list or pointer, or in the version.
func TestHoldsNothingIsTheEmptyConfigOnly(t *testing.T) {
	for name, cfg := range map[string]ignition.Config{
		"users":   {Ignition: types.Ignition{Version: "3.5.0"}, Passwd: types.Passwd{Users: []types.PasswdUser{}}},
		"kargs":   {Ignition: types.Ignition{Version: "3.5.0"}, KernelArguments: types.KernelArguments{ShouldExist: []types.KernelArgument{}}},
		"proxy":   {Ignition: types.Ignition{Version: "3.5.0", Proxy: types.Proxy{HTTPProxy: ptr.To("")}}},
		"version": {Ignition: types.Ignition{Version: "3.4.0"}},
	} {
		if holdsNothing(cfg) {
			t.Errorf("%s: holdsNothing(%+v) = true", name, cfg)
		}
	}
}
