package kubeletconfig

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/vincent-petithory/dataurl"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// confMC is a MachineConfig of role writing kubelet.conf with maxPods (and whatever extra
// file JSON is given); maxPods tells in the tests which one became the base.
func confMC(name, role string, maxPods int, extraFiles ...string) *mcfgv1.MachineConfig {
	conf := fmt.Sprintf("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: %d\n", maxPods)
	files := append([]string{fmt.Sprintf(`{"path":%q,"contents":{"source":%q}}`, KubeletConfPath, dataurl.EncodeBytes([]byte(conf)))}, extraFiles...)
	return rawMC(name, role, `{"ignition":{"version":"3.4.0"},"storage":{"files":[`+strings.Join(files, ",")+`]}}`)
}

func rawMC(name, role, raw string) *mcfgv1.MachineConfig {
	return &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"machineconfiguration.openshift.io/role": role}},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(raw)}},
	}
}

func TestFindBase(t *testing.T) {
	worker, infra := builtinPool(t, "worker"), customPool("infra")
	ownedByKC := confMC("50-anything", "worker", 999)
	ownedByKC.OwnerReferences = []metav1.OwnerReference{{Kind: "KubeletConfig", Name: "x", Controller: ptr.To(true)}}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	fmt.Fprint(w, "kind: KubeletConfiguration\nmaxPods: 42\n")
	w.Close()
	gzipped := rawMC("60-gzip", "worker", fmt.Sprintf(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":%q,"contents":{"compression":"gzip","source":"data:;base64,%s"}}]}}`,
		KubeletConfPath, base64.StdEncoding.EncodeToString(gz.Bytes())))
	cases := []struct {
		name    string
		pool    *mcfgv1.MachineConfigPool
		mcs     []*mcfgv1.MachineConfig
		maxPods int32  // of the base found
		source  string // where it came from
		noBase  bool   // none found
		err     string // or the error
	}{
		{name: "nothing writes it: no base", pool: worker, mcs: []*mcfgv1.MachineConfig{rawMC("00-worker", "worker", `{"ignition":{"version":"3.5.0"}}`)}, noBase: true},
		{name: "only generated ones write it: no base", pool: worker, mcs: []*mcfgv1.MachineConfig{confMC("99-worker-generated-kubelet", "worker", 99), ownedByKC}, noBase: true},
		{name: "the last in merge order", pool: worker, mcs: []*mcfgv1.MachineConfig{confMC("98-worker-generated-kubelet", "worker", 98), confMC("01-worker-kubelet", "worker", 1)}, maxPods: 98, source: "MachineConfig 98-worker-generated-kubelet"},
		{name: "generated kubelet MachineConfigs are never the base", pool: worker, mcs: []*mcfgv1.MachineConfig{confMC("01-worker-kubelet", "worker", 1),
			confMC("99-worker-generated-kubelet", "worker", 99), confMC("99-worker-generated-kubelet-3", "worker", 993), ownedByKC}, maxPods: 1, source: "MachineConfig 01-worker-kubelet"},
		{name: "other pools' MachineConfigs are not selected", pool: worker, mcs: []*mcfgv1.MachineConfig{confMC("01-worker-kubelet", "worker", 1), confMC("01-master-kubelet", "master", 2)}, maxPods: 1},
		{name: "a custom pool's own role wins over the worker's", pool: infra, mcs: []*mcfgv1.MachineConfig{confMC("98-worker-generated-kubelet", "worker", 98), confMC("05-infra", "infra", 5)}, maxPods: 5},
		{name: "a later file without contents keeps the earlier contents", pool: worker, mcs: []*mcfgv1.MachineConfig{confMC("01-worker-kubelet", "worker", 1),
			rawMC("50-mode", "worker", fmt.Sprintf(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":%q,"mode":384}]}}`, KubeletConfPath))}, maxPods: 1},
		{name: "gzip", pool: worker, mcs: []*mcfgv1.MachineConfig{confMC("01-worker-kubelet", "worker", 1), gzipped}, maxPods: 42},
		{name: "a remote source", pool: worker, mcs: []*mcfgv1.MachineConfig{rawMC("50-remote", "worker", fmt.Sprintf(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":%q,"contents":{"source":"https://example.com/k.conf"}}]}}`, KubeletConfPath))},
			err: `MachineConfig "50-remote": spec.config.storage.files.0.contents.source: /etc/kubernetes/kubelet.conf: only inline data: URLs`},
		{name: "an append", pool: worker, mcs: []*mcfgv1.MachineConfig{rawMC("50-append", "worker", fmt.Sprintf(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":%q,"append":[{"source":"data:,x"}]}]}}`, KubeletConfPath))},
			err: "MachineConfig 50-append: storage.files[/etc/kubernetes/kubelet.conf].append"},
		{name: "not YAML", pool: worker, mcs: []*mcfgv1.MachineConfig{rawMC("50-junk", "worker", fmt.Sprintf(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":%q,"contents":{"source":"data:,maxPods%%3A%%20%%5B"}}]}}`, KubeletConfPath))},
			err: "MachineConfig 50-junk: /etc/kubernetes/kubelet.conf is not a KubeletConfiguration"},
		{name: "a broken MachineConfig", pool: worker, mcs: []*mcfgv1.MachineConfig{rawMC("50-broken", "worker", `{"ignition":{"version":"9.0.0"}}`)}, err: `MachineConfig "50-broken": spec.config.ignition.version`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base, err := FindBase(tc.pool, tc.mcs, parseMC)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.source != "" && base.Source != tc.source {
				t.Errorf("source %q, want %q", base.Source, tc.source)
			}
			if (base.Config == nil) != tc.noBase {
				t.Fatalf("base %+v from %q, want none: %v", base.Config, base.Source, tc.noBase)
			}
			if tc.noBase {
				return
			}
			if base.Config.MaxPods != tc.maxPods {
				t.Errorf("base maxPods %d (from %s), want %d", base.Config.MaxPods, base.Source, tc.maxPods)
			}
		})
	}
}

func TestIsGeneratedNeedsARoleToJudgeByName(t *testing.T) {
	unlabelled := rawMC("99-worker-generated-kubelet", "", `{}`)
	unlabelled.Labels = nil
	if IsGenerated(unlabelled) {
		t.Error("an unlabelled MachineConfig counted as generated")
	}
	if !IsGenerated(rawMC("99-my-pool-generated-kubelet-2", "my-pool", `{}`)) {
		t.Error("a generated name of pool my-pool not recognised")
	}
	if IsGenerated(rawMC("99-worker-generated-kubelet-x", "worker", `{}`)) {
		t.Error("a non-numeric suffix counted as generated")
	}
}
