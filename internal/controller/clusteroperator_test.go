package controller

import (
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// The ClusterOperator informer is configured only where the kind is served (the cache would
// fail to start on a kind it cannot map), and then for machine-config alone (its RBAC names it).
// test/integration runs the whole manager with and without the kind.
func TestWithClusterOperator(t *testing.T) {
	selector := func(c cache.Options) fields.Selector {
		for obj, by := range c.ByObject {
			if _, ok := obj.(*configv1.ClusterOperator); ok {
				return by.Field
			}
		}
		return nil
	}
	base := cacheOptions(Options{}, false)
	if got := selector(withClusterOperator(base, false)); got != nil {
		t.Errorf("ClusterOperators not served, but the cache configures them (%v)", got)
	}
	got := selector(withClusterOperator(base, true))
	if got == nil || got.String() != "metadata.name=machine-config" {
		t.Errorf("ClusterOperator informer selects %v, want metadata.name=machine-config", got)
	}
}
