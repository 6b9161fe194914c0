package network

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
)

// Setup makes the network, after checking that none of the layout's ranges is in use on this
// host for something else. It may run over a network a previous run left.
func Setup(l Layout, apiPort int) error {
	if err := l.Validate(); err != nil {
		return err
	}
	routes, err := hostRoutes()
	if err != nil {
		return err
	}
	if err := l.ConflictsWith(routes); err != nil {
		return err
	}
	return run(l.SetupCommands(apiPort), false)
}

// CutOff cuts machine i off the network, or connects it again (see CutOffCommands).
func CutOff(l Layout, i int, cut bool) error { return run(l.CutOffCommands(i, cut), !cut) }

// ServerDown makes the Machine Config Server unreachable, or reachable again (see
// ServerDownCommands).
func ServerDown(l Layout, down bool) error { return run(l.ServerDownCommands(down), !down) }

// PointAPIInt sends new connections to api-int's Machine Config Server port to target.
func PointAPIInt(l Layout, target netip.AddrPort) error { return run(l.APIIntCommands(target), false) }

// Teardown removes the network, and every machine link and pod bridge of the layout.
func Teardown(l Layout) error {
	out, err := exec.Command("ip", "-j", "link", "show").Output()
	if err != nil {
		return fmt.Errorf("ip link show: %w", err)
	}
	var links []struct {
		Name string `json:"ifname"`
	}
	if err := json.Unmarshal(out, &links); err != nil {
		return fmt.Errorf("ip -j link show: %w", err)
	}
	var ours []string
	for _, link := range links {
		// ip -j names a veth end "name@peer".
		name, _, _ := strings.Cut(link.Name, "@")
		if strings.HasPrefix(name, l.PodBridgePrefix) || strings.HasPrefix(name, l.machineLinkPrefix()) {
			ours = append(ours, name)
		}
	}
	return run(l.TeardownCommands(ours), true)
}

// Route is one route of the host's main table.
type Route struct {
	Dst  string `json:"dst"`
	Dev  string `json:"dev"`
	Type string `json:"type"`
}

// ConflictsWith refuses a layout one of whose ranges overlaps a route of this host that the
// layout did not make: blackholing it would cut the host off from a real network.
func (l Layout) ConflictsWith(routes []Route) error {
	ours := func(r Route) bool {
		return r.Type == "blackhole" || r.Dev == l.HostBridge || strings.HasPrefix(r.Dev, l.PodBridgePrefix) || strings.HasPrefix(r.Dev, l.machineLinkPrefix())
	}
	for _, r := range routes {
		if r.Dst == "default" || ours(r) {
			continue
		}
		dst, err := netip.ParsePrefix(r.Dst)
		if err != nil {
			addr, aerr := netip.ParseAddr(r.Dst)
			if aerr != nil {
				continue
			}
			dst = netip.PrefixFrom(addr, addr.BitLen())
		}
		for _, p := range []netip.Prefix{l.NodeNet, l.Services, l.Pods} {
			if p.Overlaps(dst) {
				return fmt.Errorf("dev network range %s overlaps this host's route to %s (dev %s): the dev cluster would cut it off", p, r.Dst, r.Dev)
			}
		}
	}
	return nil
}

func hostRoutes() ([]Route, error) {
	out, err := exec.Command("ip", "-j", "route", "show", "table", "main").Output()
	if err != nil {
		return nil, fmt.Errorf("ip route show: %w", err)
	}
	var routes []Route
	if err := json.Unmarshal(out, &routes); err != nil {
		return nil, fmt.Errorf("ip -j route show: %w", err)
	}
	return routes, nil
}

// run runs cmds in order. A setup stops at the first failure (the next steps would be
// meaningless); a teardown (keepGoing) removes all it can.
func run(cmds []Command, keepGoing bool) error {
	var errs []error
	for _, c := range cmds {
		if c.Unless != nil && exec.Command(c.Unless[0], c.Unless[1:]...).Run() == nil {
			continue
		}
		out, err := exec.Command(c.Args[0], c.Args[1:]...).CombinedOutput()
		if err == nil || c.inEffect(string(out)) {
			continue
		}
		errs = append(errs, fmt.Errorf("%s: %w: %s", strings.Join(c.Args, " "), err, strings.TrimSpace(string(out))))
		if !keepGoing {
			break
		}
	}
	return errors.Join(errs...)
}

// inEffect says whether a failure's output means the command's effect was there already.
func (c Command) inEffect(out string) bool {
	for _, n := range c.Exists {
		if strings.Contains(out, n) {
			return true
		}
	}
	return false
}
