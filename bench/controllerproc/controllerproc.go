// Package controllerproc starts `mco controller` as its own process for the benchmarks, so they
// measure the binary users run (its flags, its manager, its memory) and not a copy in the
// benchmark's process.
package controllerproc

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
)

// Start runs bin's controller against kubeconfig with its metrics on a free loopback port and
// its output in a temporary log file named after name, and returns the process and the metrics
// URL. args are more flags of mco controller.
func Start(ctx context.Context, bin, kubeconfig, name string, args ...string) (*exec.Cmd, string, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"controller", "--kubeconfig", kubeconfig,
		"--metrics-bind-address", addr, "--health-probe-bind-address", "0"}, args...)...)
	logFile, err := os.CreateTemp("", name+"-controller-*.log")
	if err != nil {
		return nil, "", err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("%s (run `make build`): %w", bin, err)
	}
	fmt.Printf("controller log: %s\n", logFile.Name())
	return cmd, "http://" + addr + "/metrics", nil
}

// FreeAddr is a loopback address with a port nothing listens on now.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
