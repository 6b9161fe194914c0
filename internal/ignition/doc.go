// Package ignition is mco's one door to Ignition configs: it parses every spec version a
// MachineConfig may carry (2.0–2.2, 3.0–3.5; JSON or YAML) into the canonical 3.5 types, and
// converts the canonical form down to the spec a client asks for. It wraps the upstream
// libraries (coreos/ignition/v2, coreos/ignition for 2.x, coreos/ign-converter) and adds
// reporting that names the field, line and column. What Ignition only warns about (a key no
// field takes, which it ignores; a key differing from a field's name only in case, which it
// reads as that field) is a Warning, so configs Ignition and OpenShift accept are accepted.
// Stricter than Ignition, which silently keeps the last: a key given twice in one object (also
// as case variants of one field), a second YAML document and configs over MaxConfigSize are
// errors, as is everything Ignition refuses.
package ignition
