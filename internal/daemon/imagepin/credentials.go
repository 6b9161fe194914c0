package imagepin

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// PullSecretPath is the node's pull secret, where OpenShift writes the cluster's and the kubelet
// reads it for every pull (a docker config.json: auths by registry).
const PullSecretPath = "/var/lib/kubelet/config.json"

// Credentials are the node's pull secret's entries: key (a registry host, or a host and
// repository path) → user and password.
type Credentials struct {
	entries map[string][2]string
}

// ParseCredentials reads a docker config.json; empty data is no credentials.
func ParseCredentials(data []byte) (*Credentials, error) {
	c := &Credentials{entries: map[string][2]string{}}
	if len(strings.TrimSpace(string(data))) == 0 {
		return c, nil
	}
	var conf struct {
		Auths map[string]struct {
			Auth     string `json:"auth"`
			Username string `json:"username"`
			Password string `json:"password"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		return nil, fmt.Errorf("%s: %w", PullSecretPath, err)
	}
	for key, e := range conf.Auths {
		user, pass := e.Username, e.Password
		if e.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(e.Auth)
			if err != nil {
				return nil, fmt.Errorf("%s: the auth of %q is not base64: %w", PullSecretPath, key, err)
			}
			var ok bool
			if user, pass, ok = strings.Cut(string(raw), ":"); !ok {
				return nil, fmt.Errorf("%s: the auth of %q is not user:password", PullSecretPath, key)
			}
		}
		c.entries[normalizeKey(key)] = [2]string{user, pass}
	}
	return c, nil
}

// normalizeKey drops a scheme and a trailing path the docker CLI writes ("https://index.docker.io/v1/").
func normalizeKey(k string) string {
	k = strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://")
	k = strings.TrimSuffix(k, "/")
	k = strings.TrimSuffix(k, "/v1")
	if k == "index.docker.io" {
		return "docker.io"
	}
	return k
}

// For finds the entry for an image reference: the longest key that is its registry host or a
// prefix of its repository at a path boundary, as the kubelet matches its keyring.
func (c *Credentials) For(ref string) (user, pass string, ok bool) {
	if c == nil {
		return "", "", false
	}
	name, _, _ := strings.Cut(ref, "@")
	best := ""
	for key := range c.entries {
		if (name == key || strings.HasPrefix(name, key+"/")) && len(key) > len(best) {
			best = key
		}
	}
	if best == "" {
		return "", "", false
	}
	e := c.entries[best]
	return e[0], e[1], true
}

// ForHost is For for a registry host alone, as containerd's resolver asks (a mirror's host too).
func (c *Credentials) ForHost(host string) (string, string, error) {
	if c == nil {
		return "", "", nil
	}
	if host == "registry-1.docker.io" {
		host = "docker.io"
	}
	user, pass, _ := c.For(host)
	return user, pass, nil
}

// Auth is what a CRI pull of ref sends: the entry for its registry, nil when none (the runtime
// then uses its own configuration).
func (c *Credentials) Auth(ref string) *runtimeapi.AuthConfig {
	user, pass, ok := c.For(ref)
	if !ok {
		return nil
	}
	return &runtimeapi.AuthConfig{Username: user, Password: pass}
}
