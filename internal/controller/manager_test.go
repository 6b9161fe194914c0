package controller

import (
	"maps"
	"slices"
	"testing"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	bootimagecontroller "github.com/mco-dev/mco/internal/controller/bootimage"
	"github.com/mco-dev/mco/internal/metricsauth"
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

// Every cached object loses its managedFields; a Node also what only its kubelet reads.
func TestCacheOptionsStripWhatNoControllerReads(t *testing.T) {
	c := cacheOptions(Options{}, servedKinds{})
	mcn := &mcfgv1.MachineConfigNode{ObjectMeta: metav1.ObjectMeta{Name: "n", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "machine-config-daemon"}}}}
	if c.DefaultTransform == nil {
		t.Fatal("no default transform")
	}
	if got, err := c.DefaultTransform(mcn); err != nil || got.(*mcfgv1.MachineConfigNode).ManagedFields != nil {
		t.Errorf("default transform kept managedFields: %v %v", got, err)
	}
	var nodeTransform func(any) (any, error)
	for obj, by := range c.ByObject {
		if _, ok := obj.(*corev1.Node); ok {
			nodeTransform = by.Transform
		}
	}
	if nodeTransform == nil {
		t.Fatal("Nodes cached without their transform")
	}
	n := &corev1.Node{Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: []string{"a"}}}}}
	if got, err := nodeTransform(n); err != nil || got.(*corev1.Node).Status.Images != nil {
		t.Errorf("node transform kept status.images: %v %v", got, err)
	}
}

// The controller's metrics: plain HTTP on loopback, HTTPS with every request reviewed anywhere
// else, "0" or "" none.
func TestMetricsOptions(t *testing.T) {
	for addr, secure := range map[string]bool{"127.0.0.1:9191": false, ":9191": true, "0.0.0.0:9191": true} {
		opts, selfSigned, err := metricsOptions(metricsauth.Endpoint{Address: addr})
		if err != nil {
			t.Fatal(err)
		}
		if opts.SecureServing != secure || (opts.FilterProvider != nil) != secure || (len(opts.TLSOpts) > 0) != secure || selfSigned != secure {
			t.Errorf("%s: secure %v, filter %v, TLS options %d, self-signed %v; want secure %v", addr, opts.SecureServing, opts.FilterProvider != nil, len(opts.TLSOpts), selfSigned, secure)
		}
	}
	if opts, selfSigned, err := metricsOptions(metricsauth.Endpoint{Address: ":9191", CertDir: t.TempDir()}); err != nil || selfSigned || !opts.SecureServing {
		t.Errorf("with a cert dir: secure %v, self-signed %v, %v", opts.SecureServing, selfSigned, err)
	}
	for _, off := range []string{"0", ""} {
		if opts, _, _ := metricsOptions(metricsauth.Endpoint{Address: off}); opts.BindAddress != "0" {
			t.Errorf("%q: bind address %q, want 0 (none)", off, opts.BindAddress)
		}
	}
}
