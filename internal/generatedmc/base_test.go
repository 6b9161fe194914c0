package generatedmc

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/vincent-petithory/dataurl"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/mco-dev/mco/internal/ignition"
)

const path = "/etc/containers/registries.conf"

func mc(name, role string, files ...types.File) *mcfgv1.MachineConfig {
	cfg := types.Config{Ignition: types.Ignition{Version: "3.5.0"}}
	cfg.Storage.Files = files
	raw, _ := json.Marshal(cfg)
	return &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"machineconfiguration.openshift.io/role": role}},
		Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: raw}}}
}

func file(p string, source *string) types.File {
	return types.File{Node: types.Node{Path: p}, FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{Source: source}}}
}

func inline(s string) *string { return ptr.To(dataurl.EncodeBytes([]byte(s))) }

func pool(name string, roles ...string) *mcfgv1.MachineConfigPool {
	return &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: mcfgv1.MachineConfigPoolSpec{
		MachineConfigSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "machineconfiguration.openshift.io/role", Operator: metav1.LabelSelectorOpIn, Values: roles}}}}}
}

func TestFindBase(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte("zipped\n"))
	w.Close()
	zipped := file(path, ptr.To("data:;base64,"+base64.StdEncoding.EncodeToString(gz.Bytes())))
	zipped.Contents.Compression = ptr.To("gzip")
	owned := mc("99-worker-generated-registries", "worker", file(path, inline("generated\n")))
	cases := []struct {
		name       string
		pool       *mcfgv1.MachineConfigPool
		mcs        []*mcfgv1.MachineConfig
		wantSource string
		wantData   string
		err        string
	}{
		{name: "no MachineConfig writes it: the default", pool: pool("worker", "worker"), mcs: []*mcfgv1.MachineConfig{mc("00-worker", "worker", file("/etc/motd", inline("hi")))},
			wantSource: "the default", wantData: "default\n"},
		{name: "the last in merge order wins", pool: pool("worker", "worker"), mcs: []*mcfgv1.MachineConfig{
			mc("50-b", "worker", file(path, inline("b\n"))), mc("01-a", "worker", file(path, inline("a\n")))},
			wantSource: "MachineConfig 50-b", wantData: "b\n"},
		{name: "an entry without contents keeps the earlier contents", pool: pool("worker", "worker"), mcs: []*mcfgv1.MachineConfig{
			mc("01-a", "worker", file(path, inline("a\n"))), mc("50-b", "worker", file(path, nil))},
			wantSource: "MachineConfig 01-a", wantData: "a\n"},
		{name: "generated MachineConfigs never become the base", pool: pool("worker", "worker"), mcs: []*mcfgv1.MachineConfig{
			mc("01-a", "worker", file(path, inline("a\n"))), owned},
			wantSource: "MachineConfig 01-a", wantData: "a\n"},
		{name: "a custom pool's own role wins over worker's", pool: pool("infra", "worker", "infra"), mcs: []*mcfgv1.MachineConfig{
			mc("90-infra", "infra", file(path, inline("infra\n"))), mc("99-zz", "worker", file(path, inline("worker\n")))},
			wantSource: "MachineConfig 90-infra", wantData: "infra\n"},
		{name: "gzip", pool: pool("worker", "worker"), mcs: []*mcfgv1.MachineConfig{mc("01-a", "worker", zipped)}, wantSource: "MachineConfig 01-a", wantData: "zipped\n"},
		{name: "remote contents are refused", pool: pool("worker", "worker"), mcs: []*mcfgv1.MachineConfig{mc("01-a", "worker", file(path, ptr.To("https://example.com/x")))},
			err: "MachineConfig 01-a: storage.files[/etc/containers/registries.conf].contents: source \"https://example.com/x\" is not inline"},
		{name: "other pools' MachineConfigs are not looked at", pool: pool("master", "master"), mcs: []*mcfgv1.MachineConfig{mc("01-a", "worker", file(path, inline("a\n")))},
			wantSource: "the default", wantData: "default\n"},
		{name: "a pool without a selector has none", pool: &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}, mcs: []*mcfgv1.MachineConfig{mc("01-a", "worker", file(path, inline("a\n")))},
			wantSource: "the default", wantData: "default\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FindBase(tc.pool, tc.mcs, path, []byte("default\n"), "the default")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got.Source != tc.wantSource || string(got.Data) != tc.wantData {
				t.Fatalf("%q from %q, %v; want %q from %q", got.Data, got.Source, err, tc.wantData, tc.wantSource)
			}
		})
	}
}

func TestIsGenerated(t *testing.T) {
	owned := mc("my-name", "worker")
	owned.OwnerReferences = []metav1.OwnerReference{{Kind: "ContainerRuntimeConfig", Name: "x"}}
	for m, want := range map[*mcfgv1.MachineConfig]bool{
		mc("99-worker-generated-registries", "worker"):     true,
		mc("97-worker-generated-kubelet", "worker"):        true,
		mc("99-infra-generated-containerruntime", "infra"): true,
		mc("99-worker-generated-registries", "master"):     false,
		mc("01-worker-container-runtime", "worker"):        false,
		owned: true,
	} {
		if isGenerated(m) != want {
			t.Errorf("isGenerated(%s, role %s) = %v", m.Name, m.Labels["machineconfiguration.openshift.io/role"], !want)
		}
	}
}

func TestIgnitionLeavesOutUnwrittenFiles(t *testing.T) {
	raw, err := Ignition([]File{{Path: "/a", Data: nil}, {Path: "/b", Data: []byte("b\n")}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ignition":{"version":"3.5.0"},"storage":{"files":[{"overwrite":true,"path":"/b","contents":{"compression":"","source":"data:text/plain;charset=utf-8;base64,Ygo="},"mode":420}]}}`
	if string(raw) != want {
		t.Fatalf("%s\nwant %s", raw, want)
	}
	if empty, _ := Ignition(nil); string(empty) != `{"ignition":{"version":"3.5.0"}}` {
		t.Fatalf("empty: %s", empty)
	}
}

func TestUpdated(t *testing.T) {
	cur := mc("x", "worker")
	cur.Annotations = map[string]string{"kept": "yes"}
	// The API server's form of the same config: keys sorted.
	cur.Spec.Config.Raw = []byte(`{"ignition": {"version": "3.5.0"}}`)
	want := mc("x", "worker")
	want.Spec.Config.Raw = []byte(`{"ignition":{"version":"3.5.0"}}`)
	if _, changed := Updated(cur, want); changed {
		t.Error("the same JSON value written differently counts as a change")
	}
	want.Annotations = map[string]string{"new": "1"}
	next, changed := Updated(cur, want)
	if !changed || next.Annotations["kept"] != "yes" || next.Annotations["new"] != "1" {
		t.Errorf("annotations %v, changed %v", next.Annotations, changed)
	}
}

func TestBaseSearchTakesItsExclusionsFromTheGenerator(t *testing.T) {
	featureGates := mc("98-worker-generated-kubelet", "worker", file(path, inline("gates\n")))
	ours := mc("99-worker-generated-kubelet", "worker", file(path, inline("ours\n")))
	parsed := 0
	search := BaseSearch{Path: path, Default: []byte("default\n"), DefaultSource: "the default",
		NotABase: func(m *mcfgv1.MachineConfig) bool { return m.Name == ours.Name },
		Parse: func(m *mcfgv1.MachineConfig) (ignition.Config, error) {
			parsed++
			return ignition.Parse(m.Spec.Config.Raw)
		}}
	got, err := search.In([]*mcfgv1.MachineConfig{mc("00-worker", "worker"), featureGates, ours})
	if err != nil || got.Source != "MachineConfig 98-worker-generated-kubelet" || string(got.Data) != "gates\n" {
		t.Fatalf("%q from %q, %v; want the 98- MachineConfig's", got.Data, got.Source, err)
	}
	if parsed != 2 {
		t.Errorf("parsed %d MachineConfigs, want every one that may be a base (2)", parsed)
	}
	search.Parse = func(m *mcfgv1.MachineConfig) (ignition.Config, error) {
		return ignition.Config{}, errors.New("MachineConfig x: broken")
	}
	if _, err := search.In([]*mcfgv1.MachineConfig{featureGates}); err == nil || err.Error() != "MachineConfig x: broken" {
		t.Errorf("a parse error came back as %v, want it as it is", err)
	}
}
