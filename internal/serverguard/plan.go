package serverguard

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// DefaultTable is the nftables table (family inet) the nodes' chains live in: one chain per
// node, so a network namespace shared by several nodes of a cluster keeps each node's rules
// apart. Where one namespace holds nodes of several clusters, each cluster needs a table of its
// own (--server-guard-table): node names repeat across clusters.
const DefaultTable = "mco-server-guard"

// Rule rejects TCP from Network to Port.
type Rule struct {
	Network netip.Prefix
	Port    uint16
}

// Tag names the rule in its nftables user data, so the shell compares what a table holds with
// what it should hold without decoding expressions.
func (r Rule) Tag() string { return fmt.Sprintf("mco:reject %s tcp/%d", r.Network, r.Port) }

// Spec is everything of one node's guard: its chain (ChainName) and the rules it holds.
type Spec struct {
	Node  string
	Rules []Rule
}

// maxChainName is the kernel's limit on a chain's name (NFT_CHAIN_MAXNAMELEN, with its NUL).
const maxChainName = 255

// ChainName is the name of node's chain: "prerouting-" and the node's name, or a prefix of it
// and a digest of the whole when that is longer than the kernel takes.
//
// The chain is on the prerouting hook, which sees every packet that reaches this host from
// elsewhere (a pod's veth, another machine) before any address translation: a pod's connection
// is refused whether it is to an address of this node, to another machine, or to an address the
// node translates (api-int through a DNAT, a Service). After a DNAT, a reset sent from the input
// hook never reached the pod (the connection's reverse translation was not set up yet; seen on
// the dev cluster's api-int): the refusal has to come first.
func ChainName(node string) string {
	name := "prerouting-" + node
	if len(name) <= maxChainName {
		return name
	}
	sum := sha256.Sum256([]byte(node))
	digest := hex.EncodeToString(sum[:8])
	return name[:maxChainName-len(digest)-1] + "-" + digest
}

// Plan is the guard of node: its pods' networks (deduplicated, sorted) may not reach ports.
// It refuses no networks (the guard would guard nothing: say so rather than report it in
// place), a network that is not a prefix, and one that holds an address of the node itself:
// that would refuse its host-network pods and every machine that boots from it too.
func Plan(node string, podNetworks []netip.Prefix, nodeAddrs []netip.Addr, ports []uint16) (Spec, error) {
	if node == "" {
		return Spec{}, errors.New("the node name is required")
	}
	if len(podNetworks) == 0 {
		return Spec{}, errors.New("no pod network is known: set podNetworks in the mco-install ConfigMap, or give the node spec.podCIDRs")
	}
	if len(ports) == 0 {
		return Spec{}, errors.New("no port to guard")
	}
	var nets []netip.Prefix
	for _, p := range podNetworks {
		if !p.IsValid() {
			return Spec{}, fmt.Errorf("pod network %q is not a network prefix", p)
		}
		p = p.Masked()
		for _, a := range nodeAddrs {
			if p.Contains(a.Unmap()) {
				return Spec{}, fmt.Errorf("pod network %s holds the node's own address %s: guarding it would refuse the node's host-network pods and the machines booting from it", p, a)
			}
		}
		if !slices.Contains(nets, p) {
			nets = append(nets, p)
		}
	}
	slices.SortFunc(nets, func(a, b netip.Prefix) int { return strings.Compare(a.String(), b.String()) })
	ports = slices.Clone(ports)
	slices.Sort(ports)
	ports = slices.Compact(ports)
	var rules []Rule
	for _, n := range nets {
		for _, port := range ports {
			rules = append(rules, Rule{Network: n, Port: port})
		}
	}
	return Spec{Node: node, Rules: rules}, nil
}

// Tags are the tags of the spec's rules, in order.
func (s Spec) Tags() []string {
	tags := make([]string, len(s.Rules))
	for i, r := range s.Rules {
		tags[i] = r.Tag()
	}
	return tags
}

// ParsePrefixes reads a comma- or space-separated list of CIDRs (the mco-install ConfigMap's
// podNetworks), naming the entry that is not one.
func ParsePrefixes(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("pod network %q: %w", f, err)
		}
		out = append(out, p)
	}
	return out, nil
}
