// Package devnet is the dev cluster's network on this host. Every dev machine shares the host's
// network namespace, so every address a node, pod or Service uses must be one this host made,
// and no packet to or from those addresses may follow the host's default route out:
//
//   - a bridge (HostBridge) holds the host's address for its machines (HostAddr: the API server
//     and the bootstrap Machine Config Server listen there) and each machine's node address;
//   - each machine's pods live on a bridge of their own that the machine's CNI makes, in PodCIDR(i);
//   - the Service range is a blackhole route, except the `kubernetes` Service's address, whose
//     port 443 is translated to the API server, as kube-proxy would, so in-cluster clients reach
//     it the way they do on any cluster;
//   - the rest of the node and pod ranges are blackhole routes too, and forwarding drops anything
//     from or to the pod range that is not between two pods.
//
// The plan (Layout, its commands) is pure; Setup and Teardown run it with ip and iptables.
package network
