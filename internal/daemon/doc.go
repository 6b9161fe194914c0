// Package daemon is the node agent (`mco daemon`): it moves its own Node from currentConfig to
// desiredConfig and reports progress in the Node's annotations.
//
// The agent only sequences steps and reports; the work is elsewhere:
//
//	plan      pure diff of two rendered configs and the actions a NodeDisruptionPolicy asks for
//	nodefiles the exact paths a config puts on a node
//	apply     the crash-safe transaction that writes them (journal, originals, rollback)
//	drift     the check that the disk still holds the current config, and its monitor
//	noderoot  path resolution inside the node root and atomic writes
//	systemd, osimage, reboot   the node's systemd, OS backend and reboot, behind interfaces
//	hostlayout host files a config must not overwrite (kubeadm's kubeconfig at kubelet.conf)
//
// Every write to the Node happens on the agent's single loop goroutine; the informer and the
// drift monitor only wake it up.
package daemon
