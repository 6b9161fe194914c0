// Package metadata is what a dev machine's platform tells it about itself, as a cloud's metadata
// service would: its name and the labels its Node registers with. The supervisor writes it on
// every boot; the kubelet stand-in reads it. It is a package of its own so that the node build
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
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
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
