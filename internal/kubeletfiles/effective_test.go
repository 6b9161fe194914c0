package kubeletfiles

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

const kcHead = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

func TestDropInOrder(t *testing.T) {
	got := DropInOrder([]string{"b.conf", "a.conf", "a/x.conf", "10.conf", "9.conf", "c.yaml", "d.conf.bak", "a/b/y.conf", "A.conf"})
	want := []string{"10.conf", "9.conf", "A.conf", "a/b/y.conf", "a/x.conf", "a.conf", "b.conf"}
	if !slices.Equal(got, want) {
		t.Errorf("%q, want %q (WalkDir's order, .conf only)", got, want)
	}
}

func TestEffective(t *testing.T) {
	cases := []struct {
		name    string
		config  string // "" for no --config
		dropIns map[string]string
		want    string // JSON of some fields, or
		err     string // the error
	}{
		{name: "the --config file alone", config: kcHead + "maxPods: 110\nMaxPods: 3\nbogus: 1\nenforceNodeAllocatable: []\n",
			want: `{"maxPods":110}`},
		{name: "drop-ins in order over the file: objects merge, lists replace, null resets to the default",
			config: kcHead + "maxPods: 110\nclusterDNS: [10.96.0.10]\nevictionHard: {memory.available: 100Mi, nodefs.available: 10%}\npodPidsLimit: 4096\n",
			dropIns: map[string]string{
				"20-b.conf":   kcHead + "maxPods: 50\nevictionHard: {memory.available: 200Mi}\n",
				"10-a.conf":   kcHead + "maxPods: 70\nclusterDNS: [10.0.0.10, 10.0.0.11]\npodPidsLimit: null\n",
				"30-c.yaml":   kcHead + "maxPods: 1\n",
				"15/sub.conf": kcHead + "maxPods: 60\n",
			},
			want: `{"maxPods":50,"clusterDNS":["10.0.0.10","10.0.0.11"],"evictionHard":{"memory.available":"200Mi","nodefs.available":"10%"},"podPidsLimit":-1}`},
		{name: "the kubelet's defaults where no file says otherwise", dropIns: map[string]string{}, config: kcHead + "maxPods: 0\nimageMinimumGCAge: 0s\nenforceNodeAllocatable: []\n",
			want: `{"maxPods":110,"imageMinimumGCAge":"2m0s","enforceNodeAllocatable":["pods"],"evictionHard":{"imagefs.available":"15%","imagefs.inodesFree":"5%","memory.available":"100Mi","nodefs.available":"10%","nodefs.inodesFree":"5%"}}`},
		{name: "without --config, the kubelet's flags' legacy defaults", dropIns: map[string]string{"10.conf": kcHead + "maxPods: 7\n"},
			want: `{"maxPods":7,"readOnlyPort":10255,"authorization":{"mode":"AlwaysAllow","webhook":{"cacheAuthorizedTTL":"5m0s","cacheUnauthorizedTTL":"30s"}}}`},
		{name: "drop-ins without a --config file", dropIns: map[string]string{"50-machineconfiguration.conf": kcHead + "maxPods: 7\n"},
			want: `{"maxPods":7}`},
		{name: "a drop-in without apiVersion and kind", dropIns: map[string]string{"10-x.conf": "maxPods: 7\n"},
			err: `drop-in 10-x.conf: apiVersion "", kind "": the kubelet reads only kubelet.config.k8s.io/v1beta1 KubeletConfiguration`},
		{name: "an empty drop-in", dropIns: map[string]string{"10-x.conf": ""}, err: "drop-in 10-x.conf is empty"},
		{name: "an empty file the kubelet does not read", dropIns: map[string]string{"10-x.txt": ""}, want: `{"maxPods":110}`},
		{name: "a --config file of another kind", config: "apiVersion: v1\nkind: Config\n", err: `the --config file: apiVersion "v1", kind "Config"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var config []byte
			if tc.config != "" {
				config = []byte(tc.config)
			}
			var dropIns map[string][]byte
			if tc.dropIns != nil {
				dropIns = map[string][]byte{}
			}
			for k, v := range tc.dropIns {
				dropIns[k] = []byte(v)
			}
			got, err := Effective(config, dropIns)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			gotJSON, _ := json.Marshal(got)
			var have map[string]any
			json.Unmarshal(gotJSON, &have)
			for k, v := range want {
				if a, b := mustJSON(have[k]), mustJSON(v); a != b {
					t.Errorf("%s: %s, want %s", k, a, b)
				}
			}
		})
	}
}

// Without --config-dir the kubelet keeps the --config file's empty list; with one, its round
// trip through JSON drops it and the defaulting gives the default.
func TestEffectiveEmptyListAndTheDropInRoundTrip(t *testing.T) {
	config := []byte(kcHead + "enforceNodeAllocatable: []\n")
	alone, err := Effective(config, nil)
	if err != nil || alone.EnforceNodeAllocatable == nil || len(alone.EnforceNodeAllocatable) != 0 {
		t.Errorf("without --config-dir: %q %v, want an empty list", alone.EnforceNodeAllocatable, err)
	}
	withDir, err := Effective(config, map[string][]byte{})
	if err != nil || !slices.Equal(withDir.EnforceNodeAllocatable, []string{"pods"}) {
		t.Errorf("with an empty --config-dir: %q %v, want the default [pods]", withDir.EnforceNodeAllocatable, err)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestSatisfies(t *testing.T) {
	effective, err := Effective([]byte(kcHead+"maxPods: 110\nevictionHard: {memory.available: 100Mi, nodefs.available: 10%}\nimageMinimumGCAge: 2m\nauthentication: {webhook: {enabled: true}}\nlogging: {verbosity: 2}\n"),
		map[string][]byte{"90-later.conf": []byte(kcHead + "podPidsLimit: 100\n")})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		dropIn string
		want   []string
	}{
		{"all in effect, durations as the kubelet holds them", kcHead + "maxPods: 110\nimageMinimumGCAge: 120s\nevictionHard: {memory.available: 100Mi}\nauthentication: {webhook: {enabled: true}}\n", nil},
		{"a value another file overrides", kcHead + "maxPods: 100\npodPidsLimit: 2048\n", []string{"maxPods", "podPidsLimit"}},
		{"a map key missing or different", kcHead + "evictionHard: {memory.available: 200Mi, imagefs.available: 15%}\n", []string{"evictionHard.imagefs.available", "evictionHard.memory.available"}},
		{"nested fields", kcHead + "authentication: {webhook: {enabled: false, cacheTTL: 1m}}\nlogging: {verbosity: 4}\n", []string{"authentication.webhook.cacheTTL", "authentication.webhook.enabled", "logging.verbosity"}},
		{"an explicit zero counts", kcHead + "protectKernelDefaults: false\nstaticPodPath: \"\"\n", nil},
		{"a pointer the effective configuration lacks", kcHead + "systemReserved: {cpu: 500m}\ntopologyManagerPolicyOptions: {a: b}\n", []string{"systemReserved.cpu", "topologyManagerPolicyOptions.a"}},
		{"no such field", kcHead + "bogus: 1\n", []string{"bogus (not a KubeletConfiguration field)"}},
		{"nulls are not checked", kcHead + "maxPods: null\n", nil},
		{"not a KubeletConfiguration", "maxPods: 110\n", []string{`the drop-in: apiVersion "", kind "": the kubelet reads only kubelet.config.k8s.io/v1beta1 KubeletConfiguration`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Satisfies(effective, []byte(tc.dropIn)); !slices.Equal(got, tc.want) {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}
