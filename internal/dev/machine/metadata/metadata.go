// Package metadata is what a dev machine's platform tells it about itself, as a cloud's metadata
// service would: its name, the labels its kubelet registers the Node with, and its addresses. The supervisor writes it on every
// boot; the machine's platform-facts unit turns it into the files the kubelet and its CNI read (as afterburn does on a cloud). It is a package of its own so that the node build
// of mco (bin/mco-node) reads it without linking the supervisor and the boot stage.
package metadata

import (
	"encoding/json"
	"fmt"
	"os"
)

// Path is where a machine finds its platform metadata.
const Path = "/run/mco-dev/metadata.json"

// Metadata is the platform's description of the machine.
type Metadata struct {
	Name string `json:"name"`
	// Labels are the kubelet's --node-labels: only those a kubelet may set on its own Node.
	Labels map[string]string `json:"labels,omitempty"`
	// NodeIP is the machine's address on the host's machine bridge: the kubelet listens and
	// reports there. PodCIDR is its pods' network, on the bridge PodBridge.
	NodeIP    string `json:"nodeIP,omitempty"`
	PodCIDR   string `json:"podCIDR,omitempty"`
	PodBridge string `json:"podBridge,omitempty"`
}

// Read reads the metadata file at path.
func Read(path string) (Metadata, error) {
	var m Metadata
	data, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
