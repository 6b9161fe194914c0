package metadata

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFacts(t *testing.T) {
	m := Metadata{Name: "worker-1", NodeIP: "10.87.0.11", PodCIDR: "10.244.1.0/24", PodBridge: "mco-pods1",
		Labels: map[string]string{"mco.dev/machine": "", "kubernetes.io/os": "linux"}}
	files, err := m.Facts()
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]File{}
	for _, f := range files {
		byPath[f.Path] = f
	}
	if got := byPath[KubeletEnvPath].Content; got != "NODE_IP=10.87.0.11\nNODE_LABELS=kubernetes.io/os=linux,mco.dev/machine=\n" {
		t.Errorf("kubelet env: %q", got)
	}
	if got := byPath[KubeletDropInDir+"/10-node-address.conf"].Content; !strings.Contains(got, "address: 10.87.0.11\nhealthzBindAddress: 10.87.0.11\n") {
		t.Errorf("kubelet drop-in: %q", got)
	}
	var cni struct {
		Plugins []struct {
			Bridge string `json:"bridge"`
			IPMasq bool   `json:"ipMasq"`
			IPAM   struct {
				Ranges [][]map[string]string `json:"ranges"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(byPath[CNIConfDir+"/10-mco-dev.conflist"].Content), &cni); err != nil {
		t.Fatal(err)
	}
	if p := cni.Plugins[0]; p.Bridge != "mco-pods1" || p.IPMasq || p.IPAM.Ranges[0][0]["subnet"] != "10.244.1.0/24" {
		t.Errorf("CNI: %+v", cni)
	}
	root := t.TempDir()
	if err := WriteFacts(root, files); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(root, KubeletEnvPath)); err != nil || string(data) != byPath[KubeletEnvPath].Content {
		t.Errorf("written kubelet env: %q %v", data, err)
	}
}

func TestFactsRefuseBadMetadata(t *testing.T) {
	for _, m := range []Metadata{
		{Name: "a", NodeIP: "", PodCIDR: "10.244.1.0/24", PodBridge: "b"},
		{Name: "a", NodeIP: "10.87.0.11", PodCIDR: "10.244.1.0", PodBridge: "b"},
		{Name: "a", NodeIP: "10.87.0.11", PodCIDR: "10.244.1.0/24", PodBridge: "a-bridge-name-too-long"},
	} {
		if _, err := m.Facts(); err == nil || !strings.Contains(err.Error(), "metadata of a") {
			t.Errorf("%+v: %v", m, err)
		}
	}
}
