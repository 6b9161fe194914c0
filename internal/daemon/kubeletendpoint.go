package daemon

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// kubeletHealthz is where a kubelet started with args serves /healthz, as its configuration
// says (the kubelet's own precedence: flags over --config-dir drop-ins, *.conf in name order,
// over the --config file; else 127.0.0.1:10248). read reads a file, list a drop-in directory's
// file names. ok is false when the kubelet serves no healthz (port 0).
func kubeletHealthz(args []string, read func(string) ([]byte, error), list func(string) ([]string, error)) (url string, ok bool, err error) {
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
	if file := flagOf(args, "config"); file != "" {
		data, err := read(file)
		if err != nil {
			return "", false, err
		}
		if err := apply(file, data); err != nil {
			return "", false, err
		}
	}
	if dir := flagOf(args, "config-dir"); dir != "" {
		names, err := list(dir)
		if err != nil && !os.IsNotExist(err) {
			return "", false, err
		}
		slices.Sort(names)
		for _, n := range names {
			if !strings.HasSuffix(n, ".conf") {
				continue
			}
			data, err := read(filepath.Join(dir, n))
			if err != nil {
				return "", false, err
			}
			if err := apply(filepath.Join(dir, n), data); err != nil {
				return "", false, err
			}
		}
	}
	if v := flagOf(args, "healthz-bind-address"); v != "" {
		addr = v
	}
	if v := flagOf(args, "healthz-port"); v != "" {
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

// flagOf is the value of --name (or -name) in args, as "--name=v" or "--name v"; the last wins.
func flagOf(args []string, name string) string {
	v := ""
	for i, a := range args {
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if k, val, ok := strings.Cut(a, "="); ok && k == name {
			v = val
		} else if a == name && i+1 < len(args) {
			v = args[i+1]
		}
	}
	return v
}

// runningKubeletHealthz finds the kubelet among the processes of procDir (the agent's pod has
// the host's PID namespace) and reads its configuration through its own root. found is false
// when no kubelet runs.
func runningKubeletHealthz(procDir string) (url string, ok, found bool, err error) {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return "", false, false, err
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		pid := filepath.Join(procDir, e.Name())
		if comm, err := os.ReadFile(filepath.Join(pid, "comm")); err != nil || strings.TrimSpace(string(comm)) != "kubelet" {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(pid, "cmdline"))
		if err != nil {
			continue // it ended
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		within := func(p string) string {
			if !filepath.IsAbs(p) {
				return filepath.Join(pid, "cwd", p)
			}
			return filepath.Join(pid, "root", p)
		}
		url, ok, err := kubeletHealthz(args, func(p string) ([]byte, error) { return os.ReadFile(within(p)) },
			func(d string) ([]string, error) {
				list, err := os.ReadDir(within(d))
				names := make([]string, 0, len(list))
				for _, l := range list {
					if !l.IsDir() {
						names = append(names, l.Name())
					}
				}
				return names, err
			})
		return url, ok, true, err
	}
	return "", false, false, nil
}
