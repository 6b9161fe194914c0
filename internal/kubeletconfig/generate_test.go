package kubeletconfig

import (
	"crypto/tls"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/mco-dev/mco/internal/ignition"
)

// generatedFiles runs DesiredFor for kc on the worker pool with the given base MachineConfigs
// and returns the files of its MachineConfig, decoded.
func generatedFiles(t *testing.T, kc *mcfgv1.KubeletConfig, tlsAPI *ClusterTLS, mcs ...*mcfgv1.MachineConfig) (map[string]string, error) {
	d, err := DesiredFor(kc, Cluster{Pools: []mcfgv1.MachineConfigPool{*builtinPool(t, "worker")}, MachineConfigs: mcs,
		KubeletConfigs: []mcfgv1.KubeletConfig{*kc}, ClusterTLS: tlsAPI, ControllerVersion: "v1", Parse: parseMC})
	if err != nil {
		return nil, err
	}
	return mcFiles(d.MachineConfigs[0])
}

func mcFiles(mc *mcfgv1.MachineConfig) (map[string]string, error) {
	cfg, err := ignition.Parse(mc.Spec.Config.Raw)
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, f := range cfg.Storage.Files {
		data, err := fileContents(*f.Contents.Source, f.Contents.Compression)
		if err != nil {
			return nil, err
		}
		files[f.Path] = string(data)
	}
	return files, nil
}

func TestGenerateOwnsAndLabels(t *testing.T) {
	kc := kubeletConfig(t, `{metadata: {name: max-pods, uid: u1}, spec: {kubeletConfig: {maxPods: 100}}}`)
	mc, err := Generate(Input{Pool: customPool("infra"), KubeletConfig: kc, Name: "99-infra-generated-kubelet-1", Base: Base{Config: &kubeletv1beta1.KubeletConfiguration{}}, ControllerVersion: "v7"})
	if err != nil {
		t.Fatal(err)
	}
	ref := mc.OwnerReferences
	if mc.Name != "99-infra-generated-kubelet-1" || mc.Labels["machineconfiguration.openshift.io/role"] != "infra" ||
		mc.Annotations["machineconfiguration.openshift.io/generated-by-controller-version"] != "v7" ||
		len(ref) != 1 || ref[0].Kind != "KubeletConfig" || ref[0].UID != "u1" || !*ref[0].Controller || !*ref[0].BlockOwnerDeletion {
		t.Errorf("metadata %+v", mc.ObjectMeta)
	}
}

func TestNodeSizingEnv(t *testing.T) {
	cases := []struct {
		auto     *bool
		reserved map[string]string
		want     string
	}{
		{nil, map[string]string{}, ""},
		{ptr.To(true), map[string]string{}, "NODE_SIZING_ENABLED=true\nSYSTEM_RESERVED_MEMORY=1Gi\nSYSTEM_RESERVED_CPU=500m\nSYSTEM_RESERVED_ES=1Gi\n"},
		{ptr.To(false), map[string]string{}, "NODE_SIZING_ENABLED=false\nSYSTEM_RESERVED_MEMORY=1Gi\nSYSTEM_RESERVED_CPU=500m\nSYSTEM_RESERVED_ES=1Gi\n"},
		{nil, map[string]string{"cpu": "1", "memory": ""}, "NODE_SIZING_ENABLED=false\nSYSTEM_RESERVED_MEMORY=1Gi\nSYSTEM_RESERVED_CPU=1\nSYSTEM_RESERVED_ES=1Gi\n"},
		{ptr.To(true), map[string]string{"ephemeral-storage": "5Gi"}, "NODE_SIZING_ENABLED=false\nSYSTEM_RESERVED_MEMORY=1Gi\nSYSTEM_RESERVED_CPU=500m\nSYSTEM_RESERVED_ES=5Gi\n"},
	}
	for _, tc := range cases {
		if got := string(nodeSizingEnv(tc.auto, tc.reserved)); got != tc.want {
			t.Errorf("auto %v reserved %v:\n%s\nwant\n%s", tc.auto, tc.reserved, got, tc.want)
		}
	}
}

func TestProfileSettings(t *testing.T) {
	known := map[string]bool{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		known[s.Name] = true
	}
	for openssl, iana := range ianaCipherName {
		if !known[iana] {
			t.Errorf("%s maps to %s, which Go's crypto/tls does not know", openssl, iana)
		}
	}
	inter := ProfileSettings(nil)
	if inter.MinVersion != "VersionTLS12" || len(inter.CipherSuites) != 9 || inter.CipherSuites[0] != "TLS_AES_128_GCM_SHA256" {
		t.Errorf("nil profile: %+v, want Intermediate", inter)
	}
	for _, p := range []*configv1.TLSSecurityProfile{{Type: "Bogus"}, {Type: configv1.TLSProfileCustomType}, {}} {
		if got := ProfileSettings(p); got.MinVersion != inter.MinVersion || strings.Join(got.CipherSuites, ",") != strings.Join(inter.CipherSuites, ",") {
			t.Errorf("%+v: %+v, want Intermediate", p, got)
		}
	}
	custom := ProfileSettings(&configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType, Custom: &configv1.CustomTLSProfile{TLSProfileSpec: configv1.TLSProfileSpec{
		Ciphers: []string{"DHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384", "AES128-SHA"}, MinTLSVersion: configv1.VersionTLS10}}})
	if custom.MinVersion != "VersionTLS10" || strings.Join(custom.CipherSuites, ",") != "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_RSA_WITH_AES_128_CBC_SHA" {
		t.Errorf("custom: %+v (DHE is not in Go and is dropped; order kept)", custom)
	}
}
