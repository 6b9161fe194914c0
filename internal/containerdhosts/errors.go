package containerdhosts

import "fmt"

// UnsupportedError is a registries.conf setting containerd cannot be given the same meaning
// for. FromRegistriesConf returns one per setting (several joined with errors.Join), before
// anything is written, so that the caller can report the refusal instead of leaving mirrors
// or restrictions silently without effect.
type UnsupportedError struct {
	// Registry is the [[registry]] entry's prefix (its location when it has no prefix); empty
	// for a setting of the file as a whole.
	Registry string
	// Field is the registries.conf key, e.g. "blocked", "insecure" or "mirror.location".
	Field string
	// Reason says why containerd cannot express it.
	Reason string
}

func (e *UnsupportedError) Error() string {
	if e.Registry == "" {
		return fmt.Sprintf("registries.conf %s: %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("registries.conf [[registry]] %s: %s: %s", e.Registry, e.Field, e.Reason)
}

// ConfigError says why containerd's configuration does not make it read CertsDir, and what to
// set where.
type ConfigError struct {
	// Key is the TOML key of /etc/containerd/config.toml at fault or to set.
	Key string
	// Reason is what is wrong and the remedy.
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s %s: %s", ContainerdConfigPath, e.Key, e.Reason)
}
