// Package serverguard keeps a node's pods off the Machine Config Server's ports.
//
// The server hands out every pool's files, the pull secret and the bootstrap kubeconfig to
// whoever shows a pool's token; a workload has no business reaching it. OpenShift drops pod
// traffic to ports 22623 and 22624 at the node. mco's agent does the same with an nftables
// table of its own (inet mco-server-guard, DefaultTable): one base chain per node on the
// prerouting hook, before any address translation, rejecting TCP from the pods' networks to the
// server's ports with a reset, whatever the destination (an address of the node, a master,
// api-int). Traffic from the host itself and from host-network pods (locally generated: it never
// passes prerouting) and from other machines (a machine booting, fetching its config from a
// master) never matches.
//
// Plan is the pure core: the rules a node should have, refused when a pod network would take in
// the node's own addresses. The nftables shell (nft.go) writes and reads them over netlink
// (github.com/google/nftables), so it needs neither the nft nor the iptables command on the
// node, and works whether the node's own firewall uses nftables or iptables-legacy: every table
// on a hook sees the packet, and a reject in any of them ends it.
package serverguard
