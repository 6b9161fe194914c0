// Package machineconfignode is the pure core behind MachineConfigNode
// (machineconfiguration.openshift.io/v1), OpenShift's per-node report of where a node is in
// its update: which object a Node should have (For, the controller's part) and how the node
// agent's steps move the object's status conditions (Next, the agent's part).
//
// The conditions are OpenShift's: parents UpdatePrepared, UpdateExecuted,
// UpdatePostActionComplete, UpdateComplete, with the children Cordoned, Drained,
// AppliedFilesAndOS, RebootedNode and Uncordoned, and Resumed, Updated and NodeDegraded. Every
// one is present from the first write, False with reason NotYetOccurred until the node enters
// its phase, as OpenShift writes them, so `kubectl get mcn -o wide` fills every column.
//
// The annotations on the Node stay the control path; this object is only a report.
package machineconfignode
