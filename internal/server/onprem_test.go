package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/etcdindex"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/render"
)

// onPremDir holds the master MachineConfigs OpenShift's own template controller generates for a
// BareMetal cluster (see its README).
const onPremDir = "testdata/openshift-onprem"

// onPremFiles are the files of OpenShift's on-prem templates (templates/common/on-prem and
// templates/master/00-master/on-prem) as they come out for BareMetal. The .tmpl ones are Go
// templates for the static pods that read them (coredns, haproxy, keepalived).
var onPremFiles = []string{
	"/etc/NetworkManager/conf.d/99-kni.conf",
	"/etc/NetworkManager/dispatcher.d/30-resolv-prepender",
	"/etc/keepalived/monitor.conf",
	"/etc/kubernetes/disabled-manifests/coredns.yaml",
	"/etc/kubernetes/manifests/haproxy.yaml",
	"/etc/kubernetes/manifests/keepalived.yaml",
	"/etc/kubernetes/static-pod-resources/coredns/Corefile.tmpl",
	"/etc/kubernetes/static-pod-resources/haproxy/haproxy.cfg.tmpl",
	"/etc/kubernetes/static-pod-resources/keepalived/keepalived.conf.tmpl",
	"/etc/kubernetes/static-pod-resources/keepalived/scripts/chk_default_ingress.sh.tmpl",
	"/etc/kubernetes/static-pod-resources/keepalived/scripts/chk_mcs_script.sh.tmpl",
	"/etc/kubernetes/static-pod-resources/keepalived/scripts/chk_ocp_script.sh.tmpl",
	"/etc/kubernetes/static-pod-resources/keepalived/scripts/chk_ocp_script_both.sh.tmpl",
	"/usr/local/bin/configure-ip-forwarding.sh",
	"/usr/local/bin/resolv-prepender.sh",
	"/usr/local/bin/wait-for-br-ex-up.sh",
}

// onPremUnits are the units of the same templates (and 01-master-kubelet's on-prem kubelet).
var onPremUnits = []string{
	"kubelet.service", "nodeip-configuration.service", "on-prem-resolv-prepender.path",
	"on-prem-resolv-prepender.service", "wait-for-br-ex-up.service",
}

// TestOpenShiftOnPremMasterServedAsIs: a master pool of OpenShift's own BareMetal
// MachineConfigs renders (from-dir mode, the render the controller and `mco render` run) and is
// served through the handler byte for byte, with and without ?etcd_index=N: their Go templates
// for coredns, haproxy and keepalived do not refer to the index, so they are OpenShift's bytes,
// as OpenShift's server serves them. A file of ours that does refer to it, in the same pool, is
// still templated.
func TestOpenShiftOnPremMasterServedAsIs(t *testing.T) {
	dir := t.TempDir()
	sources := onPremSources(t, dir)
	const member = "/etc/etcd/member.env"
	writeYAML(t, filepath.Join(dir, "99-master-etcd-member.yaml"), &mcfgv1.MachineConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: mcfgv1.GroupVersion.String(), Kind: "MachineConfig"},
		ObjectMeta: metav1.ObjectMeta{Name: "99-master-etcd-member", Labels: map[string]string{mcfgv1.MachineConfigRoleLabelKey: "master"}},
		Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(
			`{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"` + member + `","contents":{"source":"data:,ETCD_NAME%3Detcd-%7B%7B.etcd_index%7D%7D%0A"}}]}}`)}},
	})
	master, err := pools.Builtin("master")
	must(t, err)
	master.TypeMeta = metav1.TypeMeta{APIVersion: mcfgv1.GroupVersion.String(), Kind: "MachineConfigPool"}
	writeYAML(t, filepath.Join(dir, "master-pool.yaml"), master)

	states, err := LoadFromDir(FromDirOptions{Dir: dir}, render.NewParseCache(16), slog.New(slog.DiscardHandler))
	must(t, err)
	state, ok := states["master"]
	if !ok || state.Err != nil {
		t.Fatalf("the master pool does not render (RenderDegraded): %v", state.Err)
	}
	state.Tokens = &PoolTokens{Token: "t"}
	store := NewStore(time.Minute)
	store.Replace(map[string]PoolState{"master": state})
	h := NewHandler(store, NewMetrics(nil), slog.New(slog.DiscardHandler))

	for _, query := range []string{"", "?etcd_index=0", "?etcd_index=2"} {
		for _, spec := range []string{"3.5.0", "3.4.0", "2.2.0"} {
			t.Run(fmt.Sprintf("%s spec %s", query, spec), func(t *testing.T) {
				rec := do(h, "GET", "/config/master"+query, "Authorization", "Bearer t",
					"Accept", "application/vnd.coreos.ignition+json;version="+spec)
				if rec.Code != 200 {
					t.Fatalf("code %d: %s", rec.Code, rec.Body.String())
				}
				served, err := ignition.Parse(rec.Body.Bytes())
				must(t, err)
				for path, f := range sources.files {
					got := findFile(served, path)
					// The data: URL itself is OpenShift's, byte for byte, in every spec.
					if ptr.Deref(got.Contents.Source, "") != ptr.Deref(f.Contents.Source, "") ||
						ptr.Deref(got.Contents.Compression, "") != ptr.Deref(f.Contents.Compression, "") {
						t.Errorf("file %s is not served as OpenShift generated it:\nserved %.300q\nwant   %.300q", path, ptr.Deref(got.Contents.Source, ""), ptr.Deref(f.Contents.Source, ""))
					}
				}
				servedUnits := unitContents(served)
				for name, want := range sources.units {
					if got, ok := servedUnits[name]; !ok || got != want {
						t.Errorf("%s is not served as OpenShift generated it:\nserved %.300q\nwant   %.300q", name, got, want)
					}
				}
				want, index := "ETCD_NAME=etcd-{{.etcd_index}}\n", ""
				if query != "" {
					index = strings.TrimPrefix(query, "?etcd_index=")
					want = "ETCD_NAME=etcd-" + index + "\n"
				}
				if got := string(fileBytes(t, served, member)); got != want {
					t.Errorf("%s = %q, want %q", member, got, want)
				}
				if index != "" {
					if got := string(fileBytes(t, served, etcdindex.IndexPath)); got != index+"\n" {
						t.Errorf("%s = %q, want %q", etcdindex.IndexPath, got, index+"\n")
					}
				}
			})
		}
	}
}

// onPremConfig is what a pool of OpenShift's MachineConfigs must serve: each file by path and
// each unit's contents and dropin by name, the later MachineConfig (by name) winning, as
// Ignition merges them.
type onPremConfig struct {
	files map[string]types.File
	units map[string]string
}

// unitContents names each unit's contents "unit NAME" and each dropin's "dropin NAME of NAME".
func unitContents(cfg ignition.Config) map[string]string {
	out := map[string]string{}
	for _, u := range cfg.Systemd.Units {
		if u.Contents != nil {
			out["unit "+u.Name] = *u.Contents
		}
		for _, d := range u.Dropins {
			out["dropin "+d.Name+" of "+u.Name] = ptr.Deref(d.Contents, "")
		}
	}
	return out
}

// onPremSources copies OpenShift's MachineConfigs into dir and returns what they must serve,
// checking they are the on-prem set this test is about: every on-prem file and unit, and Go
// templates for other programs among the files.
func onPremSources(t *testing.T, dir string) onPremConfig {
	t.Helper()
	set, err := manifest.Load(manifest.Options{}, onPremDir)
	must(t, err)
	entries, err := os.ReadDir(onPremDir)
	must(t, err)
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".yaml" {
			data, err := os.ReadFile(filepath.Join(onPremDir, e.Name()))
			must(t, err)
			writeFile(t, filepath.Join(dir, e.Name()), string(data))
		}
	}
	mcs := slices.SortedFunc(slices.Values(set.MachineConfigs), func(a, b *mcfgv1.MachineConfig) int { return strings.Compare(a.Name, b.Name) })
	want := onPremConfig{files: map[string]types.File{}, units: map[string]string{}}
	var all ignition.Config
	for _, mc := range mcs {
		cfg, err := ignition.Parse(mc.Spec.Config.Raw)
		must(t, err)
		for _, f := range cfg.Storage.Files {
			want.files[f.Path] = f
		}
		maps.Copy(want.units, unitContents(cfg))
		all.Storage.Files = append(all.Storage.Files, cfg.Storage.Files...)
		all.Systemd.Units = append(all.Systemd.Units, cfg.Systemd.Units...)
	}
	var templates int
	for _, path := range onPremFiles {
		if _, ok := want.files[path]; !ok {
			t.Fatalf("%s: no on-prem file %s", onPremDir, path)
		}
		if bytes.Contains(fileBytes(t, all, path), []byte("{{")) {
			templates++
		}
	}
	if templates < 3 {
		t.Fatalf("%s: only %d on-prem files hold Go templates; the test is about them", onPremDir, templates)
	}
	for _, name := range onPremUnits {
		if !slices.ContainsFunc(all.Systemd.Units, func(u types.Unit) bool { return u.Name == name }) {
			t.Fatalf("%s: no on-prem unit %s", onPremDir, name)
		}
	}
	return want
}
