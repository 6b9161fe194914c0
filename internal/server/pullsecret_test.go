package server

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestParsePullSecretRef(t *testing.T) {
	tests := []struct {
		ref, namespace, name string
		wantErr              bool
	}{
		{DefaultPullSecret, "openshift-config", "pull-secret", false},
		{"", "", "", false},
		{"pull-secret", "", "", true},
		{"/pull-secret", "", "", true},
		{"openshift-config/", "", "", true},
		{"a/b/c", "", "", true},
	}
	for _, tc := range tests {
		ns, name, err := ParsePullSecretRef(tc.ref)
		if ns != tc.namespace || name != tc.name || (err != nil) != tc.wantErr {
			t.Errorf("ParsePullSecretRef(%q) = %q, %q, %v", tc.ref, ns, name, err)
		}
	}
}

func TestReadPullSecretFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	writeFile(t, good, `{"auths":{}}`)
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, `{"auths":{"quay.io":{"auth":"half-writ`)
	null := filepath.Join(dir, "null.json")
	writeFile(t, null, `null`)

	if data, err := ReadPullSecretFile(good); err != nil || string(data) != `{"auths":{}}` {
		t.Errorf("good file: %q, %v", data, err)
	}
	for _, path := range []string{"", filepath.Join(dir, "missing.json")} {
		if data, err := ReadPullSecretFile(path); err != nil || data != nil {
			t.Errorf("%q: %q, %v; want no pull secret, no error", path, data, err)
		}
	}
	for _, path := range []string{bad, null} {
		_, err := ReadPullSecretFile(path)
		if err == nil {
			t.Errorf("%s accepted", path)
		} else if strings.Contains(err.Error(), "half-writ") {
			t.Errorf("error quotes the secret: %v", err)
		}
	}
}

// secretReader is a client.Reader holding at most one Secret.
type secretReader struct{ secret *corev1.Secret }

func (r *secretReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if r.secret == nil || key != client.ObjectKeyFromObject(r.secret) {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
	}
	r.secret.DeepCopyInto(obj.(*corev1.Secret))
	return nil
}

func (r *secretReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return nil
}

// TestClusterPullSecret: the Secret's .dockerconfigjson is served; an absent, keyless or
// unparsable one serves nothing and is no error; each state is logged once, not per snapshot.
func TestClusterPullSecret(t *testing.T) {
	var logs bytes.Buffer
	reader := &secretReader{}
	ref := types.NamespacedName{Namespace: "openshift-config", Name: "pull-secret"}
	src := &clusterSource{reader: reader, opts: ClusterOptions{PullSecret: ref}, log: slog.New(slog.NewTextHandler(&logs, nil))}
	read := func(want string) {
		t.Helper()
		for range 3 {
			data, err := src.pullSecret(context.Background())
			if err != nil || string(data) != want {
				t.Fatalf("pullSecret = %q, %v; want %q", data, err, want)
			}
		}
	}
	logged := func(level, msg string) {
		t.Helper()
		if n := strings.Count(logs.String(), msg); n != 1 || !strings.Contains(logs.String(), "level="+level) {
			t.Fatalf("want one %s line %q, got:\n%s", level, msg, logs.String())
		}
		if strings.Contains(logs.String(), "djE=") {
			t.Fatalf("the secret was logged:\n%s", logs.String())
		}
		logs.Reset()
	}

	read("")
	logged("INFO", "no pull secret")

	reader.secret = &corev1.Secret{}
	reader.secret.Namespace, reader.secret.Name = ref.Namespace, ref.Name
	reader.secret.Data = map[string][]byte{PullSecretKey: []byte(`{"auths":{"quay.io":{"auth":"djE="}}}`)}
	read(`{"auths":{"quay.io":{"auth":"djE="}}}`)
	logged("INFO", "serving the pull secret")

	reader.secret.Data = map[string][]byte{"config.json": []byte(`{}`)}
	read("")
	logged("WARN", "has no .dockerconfigjson")

	reader.secret.Data = map[string][]byte{PullSecretKey: []byte(`{"auths":djE=`)}
	read("")
	logged("WARN", "not a JSON object")

	src.opts.PullSecret = types.NamespacedName{}
	read("")
	if logs.Len() != 0 {
		t.Fatalf("disabled pull secret logged:\n%s", logs.String())
	}
}
