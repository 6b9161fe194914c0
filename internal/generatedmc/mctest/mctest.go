// Package mctest holds what the integration tests of the controllers that generate
// MachineConfigs share: a MachineConfig writing one file (a base), a MachineConfig's files
// decoded, and waits on MachineConfigs in a live control plane.
package mctest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/vincent-petithory/dataurl"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
)

const pollInterval = 100 * time.Millisecond

// FileMC is a MachineConfig of pool role writing contents to path, mode 0644.
func FileMC(name, role, path, contents string) *mcfgv1.MachineConfig {
	cfg := ignition.Empty()
	cfg.Storage.Files = append(cfg.Storage.Files, types.File{Node: types.Node{Path: path},
		FileEmbedded1: types.FileEmbedded1{Mode: ptr.To(0o644), Contents: types.Resource{Source: ptr.To(dataurl.EncodeBytes([]byte(contents)))}}})
	raw, err := json.Marshal(cfg)
	if err != nil {
		panic(err) // an Ignition config of plain values always encodes
	}
	return &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{protocol.RoleLabel: role}},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: raw}},
	}
}

// Files is mc's files by path, their data URLs decoded.
func Files(t testing.TB, mc *mcfgv1.MachineConfig) map[string]string {
	t.Helper()
	cfg, err := ignition.Parse(mc.Spec.Config.Raw)
	if err != nil {
		t.Fatalf("MachineConfig %s: %v", mc.Name, err)
	}
	out := map[string]string{}
	for _, f := range cfg.Storage.Files {
		if f.Contents.Source == nil {
			t.Fatalf("MachineConfig %s: file %s has no contents", mc.Name, f.Path)
		}
		u, err := dataurl.DecodeString(*f.Contents.Source)
		if err != nil {
			t.Fatalf("MachineConfig %s: file %s: %v", mc.Name, f.Path, err)
		}
		out[f.Path] = string(u.Data)
	}
	return out
}

// Get reads the named MachineConfig, failing t when it cannot.
func Get(t testing.TB, ctx context.Context, c client.Reader, name string) *mcfgv1.MachineConfig {
	t.Helper()
	mc := &mcfgv1.MachineConfig{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		t.Fatalf("reading MachineConfig %s: %v", name, err)
	}
	return mc
}

// Wait polls until the named MachineConfig exists and ok accepts it, and returns it.
func Wait(t testing.TB, ctx context.Context, c client.Reader, name string, ok func(*mcfgv1.MachineConfig) bool) *mcfgv1.MachineConfig {
	t.Helper()
	var mc *mcfgv1.MachineConfig
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		mc = &mcfgv1.MachineConfig{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return ok(mc), nil
	})
	if err != nil {
		t.Fatalf("waiting for MachineConfig %s: %v", name, err)
	}
	return mc
}

// ExpectNone fails t unless the named MachineConfig is absent.
func ExpectNone(t testing.TB, ctx context.Context, c client.Reader, name string) {
	t.Helper()
	if err := c.Get(ctx, client.ObjectKey{Name: name}, &mcfgv1.MachineConfig{}); !apierrors.IsNotFound(err) {
		t.Errorf("MachineConfig %s: %v, want none", name, err)
	}
}

// WaitGone polls until obj (found by its name and namespace) no longer exists.
func WaitGone(t testing.TB, ctx context.Context, c client.Reader, obj client.Object) {
	t.Helper()
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)), nil
	})
	if err != nil {
		t.Fatalf("waiting for %T %s to go: %v", obj, obj.GetName(), err)
	}
}

// GoneMC is the MachineConfig of that name, for WaitGone.
func GoneMC(name string) *mcfgv1.MachineConfig {
	return &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
