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
	c := d.Spec.Template.Spec.Containers[0]
	if got := flagValue(c.Args, "--server-host"); got != "$(MCO_SERVER_HOST)" {
		t.Fatalf("--server-host %q, want $(MCO_SERVER_HOST)", got)
	}
	var ref *corev1.ConfigMapKeySelector
	for _, e := range c.Env {
		if e.Name == "MCO_SERVER_HOST" && e.ValueFrom != nil {
			ref = e.ValueFrom.ConfigMapKeyRef
		}
	}
	if ref == nil || ref.Key != "serverHost" || !strings.HasPrefix(ref.Name, "mco-install") || (ref.Optional != nil && *ref.Optional) {
		t.Fatalf("MCO_SERVER_HOST is not required key serverHost of ConfigMap mco-install: %+v", ref)
	}
	cm := typed[corev1.ConfigMap](t, find(t, "ConfigMap", mcoNS, ref.Name))
	host := cm.Data["serverHost"]
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
	c := ds.Spec.Template.Spec.Containers[0]
	if got := flagValue(c.Args, "--apiserver-url"); got != "$(MCO_APISERVER_URL)" {
		t.Fatalf("--apiserver-url %q, want $(MCO_APISERVER_URL)", got)
	}
	var ref *corev1.ConfigMapKeySelector
	for _, e := range c.Env {
		if e.Name == "MCO_APISERVER_URL" && e.ValueFrom != nil {
			ref = e.ValueFrom.ConfigMapKeyRef
		}
	}
	if ref == nil || ref.Key != "apiServerURL" || !strings.HasPrefix(ref.Name, "mco-install") || (ref.Optional != nil && *ref.Optional) {
		t.Fatalf("MCO_APISERVER_URL is not required key apiServerURL of ConfigMap mco-install: %+v", ref)
	}
	cm := typed[corev1.ConfigMap](t, find(t, "ConfigMap", mcoNS, ref.Name))
	if u, err := url.Parse(cm.Data["apiServerURL"]); err != nil || u.Scheme != "https" || u.Host == "" {
		t.Errorf("apiServerURL %q: want an https URL (%v)", cm.Data["apiServerURL"], err)
	}
}
