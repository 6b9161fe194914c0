// Package install embeds the parts of the install manifests in this directory (config/default)
// that the dev cluster applies itself.
package install

import _ "embed"

// DaemonRBAC is daemon-rbac.yaml: the agent's ServiceAccount, roles and bindings.
//
//go:embed daemon-rbac.yaml
var DaemonRBAC []byte
