package controller

import (
	"reflect"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusteroperatorcontroller "github.com/mco-dev/mco/internal/controller/clusteroperator"
)

// The ClusterOperator and APIServer informers are configured only where the kind is served (the
// cache would fail to start on a kind it cannot map), and then for the one object each controller
// reads (its RBAC names it). test/integration runs the whole manager with and without the kinds.
func TestCacheOptionsOpenShiftKinds(t *testing.T) {
	selector := func(c cache.Options, kind client.Object) fields.Selector {
		for obj, by := range c.ByObject {
			if reflect.TypeOf(obj) == reflect.TypeOf(kind) {
				return by.Field
			}
		}
		return nil
	}
	withOperator := Options{ClusterOperator: &clusteroperatorcontroller.Options{}}
	none := cacheOptions(withOperator, servedKinds{})
	if got := selector(none, &configv1.ClusterOperator{}); got != nil {
		t.Errorf("ClusterOperators not served, but the cache configures them (%v)", got)
	}
	if got := selector(none, &configv1.APIServer{}); got != nil {
		t.Errorf("APIServers not served, but the cache configures them (%v)", got)
	}
	both := servedKinds{clusterOperators: true, apiServers: true}
	if got := selector(cacheOptions(withOperator, both), &configv1.ClusterOperator{}); got == nil || got.String() != "metadata.name=machine-config" {
		t.Errorf("ClusterOperator informer selects %v, want metadata.name=machine-config", got)
	}
	if got := selector(cacheOptions(Options{}, both), &configv1.ClusterOperator{}); got != nil {
		t.Errorf("ClusterOperator controller off, but the cache configures ClusterOperators (%v)", got)
	}
	if got := selector(cacheOptions(Options{}, both), &configv1.APIServer{}); got == nil || got.String() != "metadata.name=cluster" {
		t.Errorf("APIServer informer selects %v, want metadata.name=cluster", got)
	}
}
