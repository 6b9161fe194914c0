// Package devnet is the dev cluster's network on this host. Every dev machine has a network
// namespace of its own (machine.Network, its card), but every address a node, pod or Service uses
// must be one this host made, and no packet to or from those addresses may follow the host's
// default route out:
//
//   - a bridge (HostBridge) holds the host's address for its machines (HostAddr: the API server
//     and the bootstrap Machine Config Server listen there);
//   - each machine's card is a veth pair, the host's end MachineLink(i); the machine has its node
//     address alone and routes everything through HostAddr, and the host routes the node address
//     and the machine's pod network, PodCIDR(i), to the link: the host is the router between its
//     machines, so its rules see every packet that leaves one;
//   - each machine's pods live on a bridge of their own that the machine's CNI makes inside it;
//   - the Service range is a blackhole route, except the `kubernetes` Service's address, whose
//     port 443 is translated to the API server, as kube-proxy would, so in-cluster clients reach
//     it the way they do on any cluster; api-int's Machine Config Server port is translated to
//     the server that serves (PointAPIInt), as a load balancer would;
//   - the rest of the node and pod ranges are blackhole routes too (a machine that is off takes
//     its routes with it), and forwarding drops anything from or to the node and pod ranges that
//     is not from one machine's link to another's, or between two pods.
//
// The plan (Layout, its commands) is pure; Setup and Teardown run it with ip and iptables.
package network
