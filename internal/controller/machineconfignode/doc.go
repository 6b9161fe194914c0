// Package machineconfignode is the MachineConfigNode controller: one MachineConfigNode per Node
// a pool manages, named after the Node and owned by it, whose spec follows the Node's pool and
// desiredConfig annotation. The node agent writes the object's status (internal/daemon); this
// controller writes only its spec, creates it and deletes it once the Node has no pool or is
// gone.
package machineconfignode
