package server

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Where cluster mode finds the pull secret by default (OpenShift's global pull secret) and
// the key holding it (a kubernetes.io/dockerconfigjson Secret's).
const (
	DefaultPullSecret = "openshift-config/pull-secret"
	PullSecretKey     = ".dockerconfigjson"
)

// ParsePullSecretRef splits "<namespace>/<name>"; "" is no pull secret.
func ParsePullSecretRef(ref string) (namespace, name string, err error) {
	if ref == "" {
		return "", "", nil
	}
	namespace, name, ok := strings.Cut(ref, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("pull secret %q: want <namespace>/<name>", ref)
	}
	return namespace, name, nil
}

// ReadPullSecretFile reads a pull secret (the JSON a .dockerconfigjson holds) for the
// standalone modes; "" and a missing file are no pull secret. A file that is not a JSON
// object is an error, so a half-written file fails the reload (the previous configs keep
// being served) instead of reaching machines.
func ReadPullSecretFile(path string) ([]byte, error) {
	data, err := readOptional(path)
	if err != nil || len(data) == 0 {
		return nil, err
	}
	if checkPullSecret(data) != nil {
		// Not wrapped: the parse error quotes the secret's bytes.
		return nil, fmt.Errorf("pull secret file %s is not a JSON object (a .dockerconfigjson)", path)
	}
	return data, nil
}

// checkPullSecret accepts a JSON object, as the kubelet and CRI-O read the file. Its error
// quotes the data, so callers must not log it.
func checkPullSecret(data []byte) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return err
	}
	if obj == nil {
		return fmt.Errorf("null")
	}
	return nil
}
