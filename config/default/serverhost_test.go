package install

import (
	"net"
	"net/url"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	servingcertcontroller "github.com/mco-dev/mco/internal/controller/servingcert"
	"github.com/mco-dev/mco/internal/servingcert"
)

// A fresh install needs one edit: serverHost of the generated mco-install ConfigMap reaches the
// controller as --server-host, which turns on the user-data controllers and names the serving
// certificate the controller creates as the Secret the server mounts.
func TestServerHostFromOnePlace(t *testing.T) {
	d := typed[appsv1.Deployment](t, find(t, "Deployment", mcoNS, "mco-controller"))
	host := installSetting(t, d.Spec.Template.Spec.Containers[0], "--server-host", "MCO_SERVER_HOST", "serverHost")
	if _, port, err := net.SplitHostPort(host); err != nil || port != "22623" {
		t.Errorf("serverHost %q: want host:22623 (%v)", host, err)
	}
	names, err := servingcert.NamesFor(nil, host)
	if err != nil || names.Empty() {
		t.Errorf("serverHost %q names no serving certificate: %v", host, err)
	}
	// The Secret the controller writes is the one the server mounts.
	ds := typed[appsv1.DaemonSet](t, find(t, "DaemonSet", mcoNS, "mco-server"))
	mounted := false
	for _, v := range ds.Spec.Template.Spec.Volumes {
		mounted = mounted || v.Secret != nil && v.Secret.SecretName == servingcertcontroller.ServingSecretName
	}
	if !mounted {
		t.Errorf("the server does not mount Secret %s, which the controller creates", servingcertcontroller.ServingSecretName)
	}
}

// The API server URL served in new machines' kubeconfigs comes from the same ConfigMap, as an
// https URL (the in-cluster default would be unreachable from a machine that has just booted).
func TestAPIServerURLFromOnePlace(t *testing.T) {
	ds := typed[appsv1.DaemonSet](t, find(t, "DaemonSet", mcoNS, "mco-server"))
	raw := installSetting(t, ds.Spec.Template.Spec.Containers[0], "--apiserver-url", "MCO_APISERVER_URL", "apiServerURL")
	if u, err := url.Parse(raw); err != nil || u.Scheme != "https" || u.Host == "" {
		t.Errorf("apiServerURL %q: want an https URL (%v)", raw, err)
	}
}

// installSetting checks that c's flag takes $(env), that env is the required key of the
// generated mco-install ConfigMap, and returns the key's value as shipped.
func installSetting(t *testing.T, c corev1.Container, flag, env, key string) string {
	t.Helper()
	if got := flagValue(c.Args, flag); got != "$("+env+")" {
		t.Fatalf("%s %q, want $(%s)", flag, got, env)
	}
	var ref *corev1.ConfigMapKeySelector
	for _, e := range c.Env {
		if e.Name == env && e.ValueFrom != nil {
			ref = e.ValueFrom.ConfigMapKeyRef
		}
	}
	if ref == nil || ref.Key != key || !strings.HasPrefix(ref.Name, "mco-install") || (ref.Optional != nil && *ref.Optional) {
		t.Fatalf("%s is not required key %s of ConfigMap mco-install: %+v", env, key, ref)
	}
	cm := typed[corev1.ConfigMap](t, find(t, "ConfigMap", mcoNS, ref.Name))
	return cm.Data[key]
}

// The server listens on its node's own address (the kubelet's InternalIP, which api-int's
// load balancer reaches), not on every address of the host network it shares.
func TestServerListensOnItsNodesAddress(t *testing.T) {
	ds := typed[appsv1.DaemonSet](t, find(t, "DaemonSet", mcoNS, "mco-server"))
	c := ds.Spec.Template.Spec.Containers[0]
	bind := flagValue(c.Args, "--bind-address")
	env, ok := strings.CutPrefix(bind, "$(")
	if !ok || !ds.Spec.Template.Spec.HostNetwork {
		t.Fatalf("--bind-address %q (hostNetwork %v): want the node's address from an environment variable", bind, ds.Spec.Template.Spec.HostNetwork)
	}
	env = strings.TrimSuffix(env, ")")
	for _, e := range c.Env {
		if e.Name == env {
			if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "status.hostIP" {
				t.Errorf("%s is %+v, want the downward API's status.hostIP", env, e)
			}
			return
		}
	}
	t.Errorf("no environment variable %s for --bind-address", env)
}
