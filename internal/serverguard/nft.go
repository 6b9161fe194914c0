package serverguard

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/userdata"
	"golang.org/x/sys/unix"
)

// Firewall writes and reads guards in one nftables table (family inet) of one network
// namespace.
type Firewall struct {
	conn  *nftables.Conn
	table *nftables.Table
}

// Open connects to nftables (of the caller's network namespace, or another one through
// nftables.WithNetNSFd) for the guards in table.
func Open(table string, opts ...nftables.ConnOption) (*Firewall, error) {
	if table == "" {
		return nil, errors.New("the nftables table name is required")
	}
	c, err := nftables.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("nftables: %w", err)
	}
	return &Firewall{conn: c, table: &nftables.Table{Name: table, Family: nftables.TableFamilyINet}}, nil
}

// Table is the table's name.
func (f *Firewall) Table() string { return f.table.Name }

// priority runs the guard after conntrack (-200) and before any destination translation
// (dstnat, -100): the reset answers the address the pod asked for.
var priority = nftables.ChainPriorityRef(*nftables.ChainPriorityNATDest - 10)

// Installed are the tags of the rules node's chain holds; present is false when there is no
// such chain. A chain of that name on another hook holds nothing of ours.
func (f *Firewall) Installed(node string) (tags []string, present bool, err error) {
	chains, err := f.conn.ListChainsOfTableFamily(nftables.TableFamilyINet)
	if err != nil {
		return nil, false, fmt.Errorf("listing nftables chains: %w", err)
	}
	name := ChainName(node)
	i := slices.IndexFunc(chains, func(c *nftables.Chain) bool { return c.Table.Name == f.table.Name && c.Name == name })
	if i < 0 {
		return nil, false, nil
	}
	if c := chains[i]; c.Hooknum == nil || *c.Hooknum != *nftables.ChainHookPrerouting {
		return []string{"(not on the prerouting hook)"}, true, nil
	}
	rules, err := f.conn.GetRules(f.table, chains[i])
	if err != nil {
		return nil, false, fmt.Errorf("listing the rules of chain %s: %w", name, err)
	}
	tags = []string{}
	for _, r := range rules {
		tag, _ := userdata.GetString(r.UserData, userdata.TypeComment)
		tags = append(tags, tag)
	}
	return tags, true, nil
}

// Apply makes node's chain hold exactly spec, in one transaction (the kernel applies all of it
// or none), and says whether it had to change anything: false when it held it already.
func (f *Firewall) Apply(spec Spec) (bool, error) {
	have, present, err := f.Installed(spec.Node)
	if err != nil {
		return false, err
	}
	if present && slices.Equal(have, spec.Tags()) {
		return false, nil
	}
	name := ChainName(spec.Node)
	f.conn.AddTable(f.table)
	if present {
		// Replaced whole: a chain on another hook cannot be changed into ours.
		old := &nftables.Chain{Name: name, Table: f.table}
		f.conn.FlushChain(old)
		f.conn.DelChain(old)
	}
	ch := f.conn.AddChain(&nftables.Chain{Name: name, Table: f.table, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookPrerouting, Priority: priority, Policy: ptr(nftables.ChainPolicyAccept)})
	for _, r := range spec.Rules {
		f.conn.AddRule(&nftables.Rule{Table: f.table, Chain: ch, Exprs: rejectExprs(r),
			UserData: userdata.AppendString(nil, userdata.TypeComment, r.Tag())})
	}
	if err := f.conn.Flush(); err != nil {
		return false, fmt.Errorf("writing nftables table inet %s: %w", f.table.Name, err)
	}
	return true, nil
}

// Remove deletes node's chain, and the table once no node has a chain in it.
func (f *Firewall) Remove(node string) error {
	_, present, err := f.Installed(node)
	if err != nil {
		return err
	}
	if present {
		c := &nftables.Chain{Name: ChainName(node), Table: f.table}
		f.conn.FlushChain(c)
		f.conn.DelChain(c)
		if err := f.conn.Flush(); err != nil {
			return fmt.Errorf("deleting node %s's chains from nftables table inet %s: %w", node, f.table.Name, err)
		}
	}
	chains, err := f.conn.ListChainsOfTableFamily(nftables.TableFamilyINet)
	if err != nil {
		return fmt.Errorf("listing nftables chains: %w", err)
	}
	if slices.ContainsFunc(chains, func(c *nftables.Chain) bool { return c.Table.Name == f.table.Name }) {
		return nil // another node's (a host shared by several)
	}
	f.conn.DelTable(f.table)
	if err := f.conn.Flush(); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("deleting nftables table inet %s: %w", f.table.Name, err)
	}
	return nil
}

// rejectExprs is `<family> saddr <network> tcp dport <port> counter reject with tcp reset`.
func rejectExprs(r Rule) []expr.Any {
	family, offset := byte(unix.NFPROTO_IPV4), uint32(12) // IPv4 source address
	if r.Network.Addr().Is6() {
		family, offset = unix.NFPROTO_IPV6, 8
	}
	addr := r.Network.Addr().AsSlice()
	mask := make([]byte, len(addr))
	for i := range mask {
		bits := max(0, min(8, r.Network.Bits()-8*i))
		mask[i] = byte(0xff << (8 - bits))
	}
	port := make([]byte, 2)
	binary.BigEndian.PutUint16(port, r.Port)
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{family}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: uint32(len(addr))},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: uint32(len(addr)), Mask: mask, Xor: make([]byte, len(addr))},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: addr},
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2}, // destination port
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: port},
		&expr.Counter{},
		&expr.Reject{Type: unix.NFT_REJECT_TCP_RST},
	}
}

func ptr[T any](v T) *T { return &v }
