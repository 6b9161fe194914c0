// Package ignition is mco's one door to Ignition configs: it parses every spec version a
// MachineConfig may carry (2.0–2.2, 3.0–3.5; JSON or YAML) into the canonical 3.5 types, and
// converts the canonical form down to the spec a client asks for. It wraps the upstream
// libraries (coreos/ignition/v2, coreos/ignition for 2.x, coreos/ign-converter) and adds
// error reporting that names the field, line and column, and strictness where Ignition only
// warns or silently drops: unknown keys, keys given twice, data after the config, a second
// YAML document and configs over MaxConfigSize are errors.
package ignition
