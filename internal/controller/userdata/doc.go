// Package userdata keeps the pointer Ignition configs machines boot with current. For every
// MachineConfigPool it owns Secret <pool>-user-data-managed in the Machine API namespace: a
// small Ignition config that tells a new machine to fetch its pool's full config from the
// Machine Config Server, trusting the server's CA and presenting the pool's bearer token.
// When the server host, CA, token or chosen spec changes, the Secret is rewritten; hand edits
// are reverted. Installer-made <role>-user-data Secrets are left alone except for the one safe
// edit: a rotated server CA replaces their single CA entry.
package userdata
