package controller

import (
	"maps"
	"slices"
	"testing"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	bootimagecontroller "github.com/mco-dev/mco/internal/controller/bootimage"
)

// MachineSets are cached in the Machine API namespace only, and not configured at all where the
// cluster does not serve them (the cache would fail to start on a kind it cannot map).
// config/default's observed-calls test checks the same against the real API server and RBAC.
func TestCacheOptionsMachineSets(t *testing.T) {
	opts := Options{BootImages: &bootimagecontroller.Options{MachineAPINamespace: "mapi", BootImagesNamespace: "mco"}}
	machineSetNamespaces := func(c cache.Options) []string {
		for obj, by := range c.ByObject {
			if _, ok := obj.(*machinev1beta1.MachineSet); ok {
				return slices.Sorted(maps.Keys(by.Namespaces))
			}
		}
		return nil
	}
	if got := machineSetNamespaces(cacheOptions(opts, servedKinds{machineSets: true})); !slices.Equal(got, []string{"mapi"}) {
		t.Errorf("MachineSets cached in %v, want [mapi]", got)
	}
	if got := machineSetNamespaces(cacheOptions(opts, servedKinds{})); got != nil {
		t.Errorf("MachineSets not served, but the cache configures them in %v", got)
	}
	if got := machineSetNamespaces(cacheOptions(Options{}, servedKinds{machineSets: true})); got != nil {
		t.Errorf("boot image controller off, but the cache configures MachineSets in %v", got)
	}
}

func TestServesKind(t *testing.T) {
	machineSet := machinev1beta1.GroupVersion.WithKind("MachineSet")
	empty := meta.NewDefaultRESTMapper(nil)
	if ok, err := servesKind(empty, machineSet); ok || err != nil {
		t.Errorf("no MachineSet kind: got %v, %v; want false, nil", ok, err)
	}
	served := meta.NewDefaultRESTMapper(nil)
	served.Add(machineSet, meta.RESTScopeNamespace)
	if ok, err := servesKind(served, machineSet); !ok || err != nil {
		t.Errorf("MachineSet kind mapped: got %v, %v; want true, nil", ok, err)
	}
}
