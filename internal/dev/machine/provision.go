package machine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/nodefiles"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/ignitionclient"
)

// IgnitionLog is where the first boot's Ignition output is kept inside the machine, as
// journald keeps the initramfs' log on a real one.
const IgnitionLog = "/var/log/ignition-firstboot.log"

// provision is the first boot's initramfs: identity, then the root's contents as the machine's
// provisioning says (Ignition, or a distribution installer's plain file set).
func (c Config) provision(ctx context.Context, root string) error {
	for path, content := range map[string]string{
		"etc/hostname":   c.Name + "\n",
		"etc/machine-id": randomMachineID() + "\n",
	} {
		if err := os.WriteFile(filepath.Join(root, path), []byte(content), 0o644); err != nil {
			return err
		}
	}
	switch c.Provision {
	case "", ProvisionIgnition:
		return c.provisionIgnition(ctx, root)
	case ProvisionFiles:
		set, err := c.readFileSet()
		if err != nil {
			return err
		}
		return set.writeTo(root)
	default:
		return fmt.Errorf("machine %s: provision %q: want %q or %q", c.Name, c.Provision, ProvisionIgnition, ProvisionFiles)
	}
}

// provisionIgnition runs the real Ignition client's fetch and files stages against the future
// root, with the user data the platform hands over. Before Ignition writes anything, what the
// OS image has at each path the config is about to write is recorded as that path's original,
// so the machine can be reverted to its state before any MachineConfig (seed 004).
func (c Config) provisionIgnition(ctx context.Context, root string) error {
	pointer, err := os.ReadFile(c.path(UserDataFile))
	if err != nil {
		return fmt.Errorf("user data: %w", err)
	}
	work := filepath.Join(root, "run", "ignition")
	out, err := ignitionclient.RunStages(ctx, c.Ignition, pointer, root, work, func(config []byte) error {
		return recordOriginals(root, config)
	})
	if werr := writeLog(root, out); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("%w (see %s in the machine, or %s)", err, IgnitionLog, c.path(ConsoleFile))
	}
	return presetIgnitionUnits(ctx, root)
}

func writeLog(root, out string) error {
	path := filepath.Join(root, IgnitionLog)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(out), 0o600)
}

// recordOriginals parses the config Ignition fetched and records, for every path it will write,
// what the image has there now.
func recordOriginals(root string, config []byte) error {
	cfg, err := ignition.Parse(asSpec35(config))
	if err != nil {
		return fmt.Errorf("parsing the fetched config: %w", err)
	}
	set, err := nodefiles.FromConfig(cfg)
	if err != nil {
		return err
	}
	r, err := noderoot.Open(root)
	if err != nil {
		return err
	}
	defer r.Close()
	return apply.RecordOriginals(r, set)
}

// asSpec35 relabels the fetched config, which Ignition caches in its own newest (possibly
// experimental) spec, as spec 3.5: the config came from a server that serves at most 3.5, so
// the fields that matter here (files, units, core's keys) are the same; anything else is ignored.
func asSpec35(config []byte) []byte {
	var doc map[string]json.RawMessage
	if json.Unmarshal(config, &doc) != nil {
		return config
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(doc["ignition"], &meta) != nil {
		return config
	}
	meta["version"] = json.RawMessage(`"3.5.0"`)
	doc["ignition"], _ = json.Marshal(meta)
	out, err := json.Marshal(doc)
	if err != nil {
		return config
	}
	return out
}

// presetIgnitionUnits does what systemd does on a machine's first boot for the units Ignition
// enabled or disabled: Ignition records them as presets, and the presets are applied. Only
// those units: the image's other units keep the enablement the image shipped with.
func presetIgnitionUnits(ctx context.Context, root string) error {
	data, err := os.ReadFile(filepath.Join(root, "etc/systemd/system-preset/20-ignition.preset"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var units []string
	for _, line := range trimLines(string(data)) {
		if f := strings.Fields(line); len(f) == 2 {
			units = append(units, f[1])
		}
	}
	if len(units) == 0 {
		return nil
	}
	args := append([]string{"--root=" + root, "preset", "--"}, units...)
	if out, err := exec.CommandContext(ctx, "systemctl", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("systemctl preset %s: %w: %s", strings.Join(units, " "), err, out)
	}
	return nil
}
