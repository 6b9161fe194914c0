package daemon

import (
	"fmt"
	"maps"
	"net"
	"path"
	"slices"
	"strconv"

	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/internal/daemon/runningkubelet"
	"github.com/mco-dev/mco/internal/kubeletfiles"
)

// kubeletHealthz is where a kubelet started with args serves /healthz, as its configuration
// says. read reads a file, list the files below a drop-in directory (see runningkubelet.Read).
// ok is false when the kubelet serves no healthz (port 0).
func kubeletHealthz(args []string, read func(string) ([]byte, error), list func(string) ([]string, error)) (url string, ok bool, err error) {
	k, err := runningkubelet.Read(args, "/", read, list)
	if err != nil {
		return "", false, err
	}
	return healthzOf(k)
}

// healthzOf follows the kubelet's own precedence: flags over the --config-dir drop-ins (the
// ones it reads, in its order) over the --config file; else 127.0.0.1:10248. Only the two
// fields are read, leniently: the kubelet that runs accepted these files, and a health check
// should not depend on the rest of them.
func healthzOf(k runningkubelet.Kubelet) (url string, ok bool, err error) {
	addr, port := "127.0.0.1", int64(10248)
	apply := func(name string, data []byte) error {
		var c struct {
			HealthzBindAddress *string `json:"healthzBindAddress"`
			HealthzPort        *int64  `json:"healthzPort"`
		}
		if err := yaml.Unmarshal(data, &c); err != nil {
			return fmt.Errorf("kubelet configuration %s: %w", name, err)
		}
		if c.HealthzBindAddress != nil && *c.HealthzBindAddress != "" {
			addr = *c.HealthzBindAddress
		}
		if c.HealthzPort != nil {
			port = *c.HealthzPort
		}
		return nil
	}
	if k.Config != nil {
		if err := apply(k.ConfigPath, k.Config); err != nil {
			return "", false, err
		}
	}
	for _, n := range kubeletfiles.DropInOrder(slices.Collect(maps.Keys(k.DropIns))) {
		if err := apply(path.Join(k.DropInDir, n), k.DropIns[n]); err != nil {
			return "", false, err
		}
	}
	if v := runningkubelet.Flag(k.Args, "healthz-bind-address"); v != "" {
		addr = v
	}
	if v := runningkubelet.Flag(k.Args, "healthz-port"); v != "" {
		if port, err = strconv.ParseInt(v, 10, 32); err != nil {
			return "", false, fmt.Errorf("kubelet --healthz-port %q: %w", v, err)
		}
	}
	if port == 0 {
		return "", false, nil
	}
	// A wildcard listener answers on loopback.
	switch addr {
	case "0.0.0.0":
		addr = "127.0.0.1"
	case "::":
		addr = "::1"
	}
	return "http://" + net.JoinHostPort(addr, strconv.FormatInt(port, 10)) + "/healthz", true, nil
}

// runningKubeletHealthz finds the kubelet among the processes of procDir (the agent's pod has
// the host's PID namespace) and reads its configuration through its own root. found is false
// when no kubelet runs.
func runningKubeletHealthz(procDir string) (url string, ok, found bool, err error) {
	k, found, err := runningkubelet.Find(procDir)
	if !found || err != nil {
		return "", false, found, err
	}
	url, ok, err = healthzOf(k)
	return url, ok, true, err
}
