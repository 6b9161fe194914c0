package metadata

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Where the platform facts land; the node units of the pool's base config read them.
const (
	KubeletEnvPath   = "/run/mco-dev/kubelet.env"
	KubeletDropInDir = "/run/mco-dev/kubelet.conf.d"
	CNIConfDir       = "/run/mco-dev/cni"
)

// File is one file the platform facts consist of.
type File struct {
	Path    string
	Mode    os.FileMode
	Content string
}

// Facts are the files a machine's platform-facts unit writes from its metadata: the kubelet's
// environment (node address and labels), a kubelet configuration drop-in (listen on the node
// address, the one its network card has, as the kubelet's --node-ip), and the CNI network of the machine's pods.
func (m Metadata) Facts() ([]File, error) {
	ip, err := netip.ParseAddr(m.NodeIP)
	if err != nil {
		return nil, fmt.Errorf("metadata of %s: nodeIP %q: %w", m.Name, m.NodeIP, err)
	}
	var labels []string
	for k, v := range m.Labels {
		labels = append(labels, k+"="+v)
	}
	slices.Sort(labels)
	env := fmt.Sprintf("NODE_IP=%s\nNODE_LABELS=%s\n", ip, strings.Join(labels, ","))
	dropIn := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
healthzBindAddress: %s
`, ip, ip)
	cni, err := m.CNIConfig()
	if err != nil {
		return nil, err
	}
	files := []File{
		{Path: KubeletEnvPath, Mode: 0o644, Content: env},
		{Path: filepath.Join(KubeletDropInDir, "10-node-address.conf"), Mode: 0o644, Content: dropIn},
		{Path: filepath.Join(CNIConfDir, CNIConfName), Mode: 0o644, Content: cni},
	}
	return files, nil
}

// CNIConfName is the file name of the machine's CNI network in a CNI configuration directory.
const CNIConfName = "10-mco-dev.conflist"

// CNIConfig is the CNI network of the machine's pods: a bridge of its own on its pod range, no
// masquerading (pods' packets keep their addresses, which the host never routes out).
func (m Metadata) CNIConfig() (string, error) {
	pods, err := netip.ParsePrefix(m.PodCIDR)
	if err != nil {
		return "", fmt.Errorf("metadata of %s: podCIDR %q: %w", m.Name, m.PodCIDR, err)
	}
	if m.PodBridge == "" || len(m.PodBridge) > 15 {
		return "", fmt.Errorf("metadata of %s: podBridge %q must be 1 to 15 characters", m.Name, m.PodBridge)
	}
	cni, err := json.MarshalIndent(map[string]any{
		"cniVersion": "1.0.0",
		"name":       "mco-dev",
		"plugins": []any{map[string]any{
			"type": "bridge", "bridge": m.PodBridge, "isGateway": true,
			"ipMasq": false, "hairpinMode": true,
			"ipam": map[string]any{
				"type":   "host-local",
				"ranges": [][]map[string]string{{{"subnet": pods.String()}}},
				"routes": []map[string]string{{"dst": "0.0.0.0/0"}},
			},
		}},
	}, "", "  ")
	return string(cni) + "\n", err
}

// WriteFacts writes the facts under root.
func WriteFacts(root string, files []File) error {
	for _, f := range files {
		p := filepath.Join(root, f.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, []byte(f.Content), f.Mode); err != nil {
			return err
		}
		if err := os.Rename(tmp, p); err != nil {
			return err
		}
	}
	return nil
}
