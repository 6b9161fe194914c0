package servingcert

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Names are the DNS names and IP addresses the serving certificate is for, normalised (DNS
// names lower-case; both sorted, without duplicates) so two sets compare with Equal.
type Names struct {
	DNS []string
	IPs []net.IP
}

// ParseNames reads DNS names and IP addresses; empty entries are skipped.
func ParseNames(list []string) (Names, error) {
	var n Names
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if ip := net.ParseIP(strings.Trim(s, "[]")); ip != nil {
			n.IPs = append(n.IPs, normalIP(ip))
			continue
		}
		s = strings.ToLower(s)
		errs := validation.IsDNS1123Subdomain(s)
		if strings.HasPrefix(s, "*.") {
			errs = validation.IsWildcardDNS1123Subdomain(s)
		}
		if len(errs) > 0 {
			return Names{}, fmt.Errorf("serving certificate name %q is neither an IP address nor a DNS name: %s", s, strings.Join(errs, "; "))
		}
		n.DNS = append(n.DNS, s)
	}
	slices.Sort(n.DNS)
	n.DNS = slices.Compact(n.DNS)
	slices.SortFunc(n.IPs, func(a, b net.IP) int { return bytes.Compare(a, b) })
	n.IPs = slices.CompactFunc(n.IPs, net.IP.Equal)
	return n, nil
}

// NamesFor is the names flag's list, or, when it is empty, the host part of serverHost
// (host[:port], as --server-host takes it). Both empty: no names, and nothing to manage.
func NamesFor(list []string, serverHost string) (Names, error) {
	if slices.ContainsFunc(list, func(s string) bool { return strings.TrimSpace(s) != "" }) {
		return ParseNames(list)
	}
	if serverHost == "" {
		return Names{}, nil
	}
	host := serverHost
	if h, _, err := net.SplitHostPort(serverHost); err == nil {
		host = h
	}
	return ParseNames([]string{host})
}

// Empty reports whether there is no name at all.
func (n Names) Empty() bool { return len(n.DNS) == 0 && len(n.IPs) == 0 }

// Equal reports whether n and o hold the same names.
func (n Names) Equal(o Names) bool {
	return slices.Equal(n.DNS, o.DNS) && slices.EqualFunc(n.IPs, o.IPs, net.IP.Equal)
}

// String lists the names, comma-separated.
func (n Names) String() string {
	out := slices.Clone(n.DNS)
	for _, ip := range n.IPs {
		out = append(out, ip.String())
	}
	return strings.Join(out, ",")
}

// first is the certificate's common name: the first DNS name, else the first address.
func (n Names) first() string {
	if len(n.DNS) > 0 {
		return n.DNS[0]
	}
	return n.IPs[0].String()
}

// namesOf are the names a certificate is valid for.
func namesOf(cert *x509.Certificate) Names {
	n, err := ParseNames(append(slices.Clone(cert.DNSNames), ipStrings(cert.IPAddresses)...))
	if err != nil {
		// A name we would not issue: never equal to a wanted set, so the certificate is replaced.
		return Names{DNS: []string{"invalid:" + err.Error()}}
	}
	return n
}

func ipStrings(ips []net.IP) []string {
	var out []string
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	return out
}

// normalIP is the 4-byte form of IPv4 addresses, so equal addresses compare equal bytewise.
func normalIP(ip net.IP) net.IP {
	if v4 := ip.To4(); v4 != nil {
		return v4
	}
	return ip
}
