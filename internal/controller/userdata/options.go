package userdata

import (
	"context"
	"fmt"
	"strings"

	"github.com/coreos/go-semver/semver"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options configure both user-data controllers.
type Options struct {
	// MachineAPINamespace holds the user-data Secrets MachineSets reference.
	MachineAPINamespace string
	// ServerNamespace holds the server's per-pool token Secrets.
	ServerNamespace string
	// ServerHost is the host[:port] machines reach the Machine Config Server at.
	ServerHost string
	// CA is where the server's CA bundle is read from.
	CA CASource
	// SpecVersion of generated pointer configs.
	SpecVersion semver.Version
}

// CASource names the ConfigMap or Secret key holding the server CA bundle.
type CASource struct {
	Kind      string // "configmap" or "secret"
	Namespace string
	Name      string
	Key       string
}

// ParseCASource reads "configmap:NAMESPACE/NAME[:KEY]" or "secret:NAMESPACE/NAME[:KEY]"; the key
// defaults to ca-bundle.crt for ConfigMaps and ca.crt for Secrets.
func ParseCASource(s string) (CASource, error) {
	kind, rest, ok := strings.Cut(s, ":")
	if !ok || (kind != "configmap" && kind != "secret") {
		return CASource{}, fmt.Errorf("CA source %q: want configmap:NAMESPACE/NAME[:KEY] or secret:NAMESPACE/NAME[:KEY]", s)
	}
	ref, key, _ := strings.Cut(rest, ":")
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || ns == "" || name == "" {
		return CASource{}, fmt.Errorf("CA source %q: want NAMESPACE/NAME", s)
	}
	if key == "" {
		key = map[string]string{"configmap": "ca-bundle.crt", "secret": "ca.crt"}[kind]
	}
	return CASource{Kind: kind, Namespace: ns, Name: name, Key: key}, nil
}

// Object is an empty object of the source's kind, for watches.
func (s CASource) Object() client.Object {
	if s.Kind == "secret" {
		return &corev1.Secret{}
	}
	return &corev1.ConfigMap{}
}

// Matches reports whether obj is the CA source.
func (s CASource) Matches(obj client.Object) bool {
	return obj.GetNamespace() == s.Namespace && obj.GetName() == s.Name
}

// Read returns the bundle; empty with no error when the object or key does not exist yet.
func (s CASource) Read(ctx context.Context, c client.Reader) ([]byte, error) {
	key := client.ObjectKey{Namespace: s.Namespace, Name: s.Name}
	if s.Kind == "secret" {
		var sec corev1.Secret
		if err := c.Get(ctx, key, &sec); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		return sec.Data[s.Key], nil
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, key, &cm); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if v, ok := cm.Data[s.Key]; ok {
		return []byte(v), nil
	}
	return cm.BinaryData[s.Key], nil
}
