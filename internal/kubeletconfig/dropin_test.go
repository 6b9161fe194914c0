package kubeletconfig

import (
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/internal/render"

	"github.com/mco-dev/mco/internal/kubeletfiles"
)

const workerSelector = "machineConfigPoolSelector: {matchLabels: {pools.operator.machineconfiguration.openshift.io/worker: \"\"}}"

// Without a base kubelet.conf from a MachineConfig (a kubeadm-built pool), a KubeletConfig
// becomes one drop-in holding only what it says; nothing else is written.
func TestDropInWithoutBase(t *testing.T) {
	cases := []struct {
		name    string
		spec    string      // the KubeletConfig's spec, after the pool selector
		tls     *ClusterTLS // the APIServer API, where served
		want    string      // the drop-in, or
		refused string      // the error, naming field and reason
	}{
		{name: "settings and log level",
			spec: "logLevel: 4\n  kubeletConfig: {maxPods: 100, evictionHard: {memory.available: 200Mi}}",
			want: "apiVersion: kubelet.config.k8s.io/v1beta1\nevictionHard:\n  memory.available: 200Mi\nkind: KubeletConfiguration\nlogging:\n  verbosity: 4\nmaxPods: 100\n"},
		{name: "the KubeletConfig's TLS profile, not the cluster's",
			spec: "tlsSecurityProfile: {type: Modern}\n  kubeletConfig: {maxPods: 100}", tls: &ClusterTLS{},
			want: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 100\ntlsCipherSuites:\n- TLS_AES_128_GCM_SHA256\n- TLS_AES_256_GCM_SHA384\n- TLS_CHACHA20_POLY1305_SHA256\ntlsMinVersion: VersionTLS13\n"},
		{name: "the cluster's profile alone sets nothing",
			spec: "kubeletConfig: {maxPods: 100}", tls: &ClusterTLS{},
			want: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 100\n"},
		{name: "spec.kubeletConfig's TLS settings win over the profile, as in OpenShift's merge",
			spec: "tlsSecurityProfile: {type: Modern}\n  kubeletConfig: {tlsMinVersion: VersionTLS12}",
			want: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ntlsCipherSuites:\n- TLS_AES_128_GCM_SHA256\n- TLS_AES_256_GCM_SHA384\n- TLS_CHACHA20_POLY1305_SHA256\ntlsMinVersion: VersionTLS12\n"},
		{name: "systemReserved stays in the drop-in: no node sizing file",
			spec: "kubeletConfig: {systemReserved: {cpu: 500m, memory: 1Gi, ephemeral-storage: 2Gi}}",
			want: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nsystemReserved:\n  cpu: 500m\n  ephemeral-storage: 2Gi\n  memory: 1Gi\n"},
		{name: "autoSizingReserved: false is what a kubelet does anyway",
			spec: "autoSizingReserved: false",
			want: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"},
		{name: "autoSizingReserved: true needs OpenShift's kubelet.service",
			spec:    "autoSizingReserved: true",
			refused: "KubeletConfig kc: spec.autoSizingReserved: true needs OpenShift's kubelet.service, which computes system-reserved from /etc/node-sizing-enabled.env; this pool has no MachineConfig writing /etc/kubernetes/kubelet.conf, so the KubeletConfig becomes the kubelet drop-in /etc/kubernetes/kubelet.conf.d/50-machineconfiguration.conf and nothing would read that file: set spec.kubeletConfig.systemReserved instead"},
		{name: "explicit zero values count; nulls and unknown keys do not",
			spec: "kubeletConfig: {protectKernelDefaults: false, staticPodPath: \"\", podPidsLimit: null, bogus: 1, kind: Other}",
			want: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nprotectKernelDefaults: false\nstaticPodPath: \"\"\n"},
		{name: "keys take the field's name, at every level, as the lenient decode reads them",
			spec: "kubeletConfig: {MaxPods: 7, Authentication: {Webhook: {CacheTTL: 1m}}, podPidsLimit: 9007199254740993}",
			want: "apiVersion: kubelet.config.k8s.io/v1beta1\nauthentication:\n  webhook:\n    cacheTTL: 1m\nkind: KubeletConfiguration\nmaxPods: 7\npodPidsLimit: 9007199254740993\n"},
		{name: "one field written twice",
			spec:    "kubeletConfig: {maxPods: 7, maxpods: 8}",
			refused: `KubeletConfig kc: spec.kubeletConfig: "maxPods" and "maxpods" both set maxPods; write it once`},
		{name: "logLevel wins over logging.verbosity, as -v wins on OpenShift",
			spec: "logLevel: 2\n  kubeletConfig: {logging: {format: json, verbosity: 7}}",
			want: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nlogging:\n  format: json\n  verbosity: 2\n"},
		{name: "feature gates are the cluster's: an empty map is not written either",
			spec: "kubeletConfig: {featureGates: {}, maxPods: 1}",
			want: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 1\n"},
		{name: "the same validation as with a base",
			spec:    "kubeletConfig: {featureGates: {Foo: true}}",
			refused: "KubeletConfig kc: spec.kubeletConfig.featureGates: is not allowed to be set, but contains: Foo=true"},
		{name: "a worker's staticPodPath as with a base",
			spec:    "kubeletConfig: {staticPodPath: /etc/elsewhere}",
			refused: `KubeletConfig kc: spec.kubeletConfig.staticPodPath: must be empty for pool "worker", but contains: /etc/elsewhere`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kc := kubeletConfig(t, "spec:\n  "+workerSelector+"\n  "+tc.spec)
			files, err := generatedFiles(t, kc, tc.tls, rawMC("00-worker", "worker", `{"ignition":{"version":"3.5.0"}}`))
			if tc.refused != "" {
				if err == nil || err.Error() != tc.refused {
					t.Fatalf("error %v\nwant %s", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 1 || files[kubeletfiles.DropInPath] != tc.want {
				t.Errorf("files %q\nwant only %s:\n%s", files, kubeletfiles.DropInPath, tc.want)
			}
		})
	}
}

// With a base from a MachineConfig the OpenShift path stays (the goldens check its bytes).
func TestBaseKeepsOpenShiftsFiles(t *testing.T) {
	kc := kubeletConfig(t, "spec:\n  "+workerSelector+"\n  logLevel: 3\n  kubeletConfig: {maxPods: 100}")
	files, err := generatedFiles(t, kc, nil, confMC("01-worker-kubelet", "worker", 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files[kubeletfiles.DropInPath]; ok || files[KubeletConfPath] == "" || files[LogLevelDropInPath] == "" {
		t.Errorf("files %q, want kubelet.conf and the log level drop-in", files)
	}
}

// Several KubeletConfigs on a pool: as on OpenShift the later generated MachineConfig replaces
// the whole file, here because they all write the one drop-in and the render's last writer of a
// path wins.
func TestLaterKubeletConfigReplacesTheDropIn(t *testing.T) {
	base := rawMC("00-worker", "worker", `{"ignition":{"version":"3.5.0"}}`)
	first := kubeletConfig(t, "metadata: {name: first}\nspec:\n  "+workerSelector+"\n  kubeletConfig: {maxPods: 100, podPidsLimit: 2048}")
	second := kubeletConfig(t, "metadata: {name: second, annotations: {machineconfiguration.openshift.io/mc-name-suffix: \"1\"}}\nspec:\n  "+workerSelector+"\n  kubeletConfig: {maxPods: 50}")
	first.Annotations = map[string]string{"machineconfiguration.openshift.io/mc-name-suffix": ""}
	worker := builtinPool(t, "worker")
	all := []mcfgv1.KubeletConfig{*first, *second}
	mcs := []*mcfgv1.MachineConfig{base}
	for _, kc := range []*mcfgv1.KubeletConfig{second, first} { // the sync order does not matter
		d, err := DesiredFor(kc, Cluster{Pools: []mcfgv1.MachineConfigPool{*worker}, MachineConfigs: []*mcfgv1.MachineConfig{base},
			KubeletConfigs: all, ControllerVersion: "v1", Parse: parseMC})
		if err != nil {
			t.Fatal(err)
		}
		mcs = append(mcs, d.MachineConfigs...)
	}
	res, err := render.Render(worker, mcs, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Ignition.Storage.Files {
		if f.Path == kubeletfiles.DropInPath {
			data, err := fileContents(*f.Contents.Source, f.Contents.Compression)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(data))
		}
	}
	want := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 50\n"
	if len(got) != 1 || got[0] != want {
		t.Errorf("rendered drop-ins %q, want only the later KubeletConfig's (podPidsLimit gone with the first):\n%s", got, want)
	}
}

// The drop-in is a KubeletConfiguration the kubelet accepts: apiVersion and kind, valid YAML.
func TestDropInIsAKubeletConfiguration(t *testing.T) {
	kc := kubeletConfig(t, "spec:\n  "+workerSelector+"\n  kubeletConfig: {maxPods: 100}")
	data, err := dropIn(kc)
	if err != nil {
		t.Fatal(err)
	}
	var head struct{ APIVersion, Kind string }
	if err := yaml.Unmarshal(data, &head); err != nil || head.APIVersion != "kubelet.config.k8s.io/v1beta1" || head.Kind != "KubeletConfiguration" {
		t.Errorf("%s: %+v %v", data, head, err)
	}
	if !strings.HasSuffix(kubeletfiles.DropInPath, ".conf") || !strings.HasPrefix(kubeletfiles.DropInPath, kubeletfiles.DropInDir+"/") {
		t.Errorf("%s: the kubelet reads only *.conf in its --config-dir", kubeletfiles.DropInPath)
	}
}
