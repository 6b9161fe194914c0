package osimage

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	securejoin "github.com/cyphar/filepath-securejoin"
)

// SimulatedStatePath is where a Simulated backend records what the node would boot next,
// relative to the node root.
const SimulatedStatePath = "var/lib/mco-dev/staged-os.json"

// Simulated stands in for rpm-ostree on the dev cluster's simulated nodes, where no OS image can
// be switched: it accepts every OS change and records it under the root, so an OS change takes
// the real path through the agent (plan → drain → stage → reboot) and can be inspected after.
type Simulated struct{ Root string }

// SimulatedState is the recorded next boot.
type SimulatedState struct {
	OSImageURL      string   `json:"osImageURL,omitempty"`
	KernelArguments []string `json:"kernelArguments,omitempty"`
}

func (Simulated) Name() string         { return "simulated" }
func (Simulated) Supports(string) bool { return true }

func (s Simulated) Stage(_ context.Context, c Change) error {
	path, err := securejoin.SecureJoin(s.Root, SimulatedStatePath)
	if err != nil {
		return err
	}
	st := SimulatedState{}
	if data, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(data, &st)
	}
	if c.OSImageURL != "" {
		st.OSImageURL = c.OSImageURL
	}
	if c.KernelArgs {
		st.KernelArguments = c.NewKernelArgs
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Discard keeps the record: like a booted deployment, what was staged before stays.
func (Simulated) Discard(context.Context) error { return nil }
