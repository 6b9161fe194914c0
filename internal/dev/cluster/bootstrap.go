package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	devnet "github.com/mco-dev/mco/internal/dev/network"
)

// The bootstrap controller and server run on this host, as on an OpenShift install's bootstrap
// node, only until the control-plane machine's pods (config/default's Deployment and DaemonSet)
// take over; then they stop, and nothing of mco runs on the host.
const (
	BootstrapControllerProcess = "bootstrap-controller"
	BootstrapServerProcess     = "bootstrap-server"
)

// ControlPlaneMachine is the machine mco dev up boots first, into pool master: the server's
// DaemonSet and, preferring the control plane, the controller's Deployment run there.
const ControlPlaneMachine = "master-0"

// Processes inside machines (pgrep -f), as each machine sees them in its PID namespace: the
// containers of config/default's pods.
const (
	// AgentProcess is the agent's, on every machine (the DaemonSet runs the node build).
	AgentProcess = "^/usr/bin/mco-node daemon"
	// ControllerProcess and ServerProcess are the controller's and server's (the server build), on
	// ControlPlaneMachine.
	ControllerProcess = "^/usr/bin/mco controller"
	ServerProcess     = "^/usr/bin/mco-server server"
)

// startBootstrapController runs mco controller on this host with config/default's arguments,
// leader-elected like the Deployment's pods, so that the pod waits until this one ends.
func (s *State) startBootstrapController(dir, mco, kubeconfig string) error {
	return s.start(dir, BootstrapControllerProcess, mco, "controller", "--kubeconfig", kubeconfig,
		"--leader-elect", "--leader-election-namespace", ServerNamespace,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		"--server-host", s.ServerHost())
}

// servingCertSecret is the server's certificate, which the controller issues for api-int.
const servingCertSecret = "machine-config-server-tls"

// startBootstrapServer waits for the serving certificate the controller issues, runs mco
// server with it on this host's address and leads api-int there.
func (s *State) startBootstrapServer(ctx context.Context, c client.Client, dir, mco, kubeconfig, apiURL string) error {
	var sec corev1.Secret
	key := client.ObjectKey{Namespace: ServerNamespace, Name: servingCertSecret}
	if err := poll(ctx, time.Minute, func() bool {
		return c.Get(ctx, key, &sec) == nil && len(sec.Data[corev1.TLSCertKey]) > 0 && len(sec.Data[corev1.TLSPrivateKeyKey]) > 0
	}); err != nil {
		return fmt.Errorf("secret %s has no certificate: %w (see logs/%s.log)", key, err, BootstrapControllerProcess)
	}
	certFile, keyFile := filepath.Join(dir, "pki", "bootstrap-server.crt"), filepath.Join(dir, "pki", "bootstrap-server.key")
	if err := os.WriteFile(certFile, sec.Data[corev1.TLSCertKey], 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(keyFile, sec.Data[corev1.TLSPrivateKeyKey], 0o600); err != nil {
		return err
	}
	host := s.Network().HostAddr()
	if err := s.start(dir, BootstrapServerProcess, mco, "server", "--kubeconfig", kubeconfig, "--namespace", ServerNamespace,
		"--bind-address", host.String(), "--secure-port", strconv.Itoa(devnet.APIIntPort), "--insecure-port", "0",
		"--tls-cert-file", certFile, "--tls-private-key-file", keyFile,
		"--apiserver-url", apiURL, "--metrics-bind-address", ""); err != nil {
		return err
	}
	target := netip.AddrPortFrom(host, devnet.APIIntPort)
	if err := poll(ctx, 30*time.Second, func() bool { return serves(target) }); err != nil {
		return fmt.Errorf("the bootstrap server does not serve on %s: %w (see logs/%s.log)", target, err, BootstrapServerProcess)
	}
	return devnet.PointAPIInt(s.Network(), target)
}

// handOver moves api-int to the server pod on the control-plane machine once it serves, then
// ends the bootstrap server and controller and waits until the controller's pod leads.
func (s *State) handOver(ctx context.Context, c client.Client, dir string) error {
	ip, err := nodeInternalIP(ctx, c, ControlPlaneMachine)
	if err != nil {
		return fmt.Errorf("api-int cannot lead to the server's pod: %w", err)
	}
	target := netip.AddrPortFrom(ip, devnet.APIIntPort)
	// What a load balancer's health check asks: whether it answers there (the pod's readiness
	// follows, up to a probe period later).
	if err := poll(ctx, 3*time.Minute, func() bool { return serves(target) }); err != nil {
		return fmt.Errorf("the server's pod on %s does not serve on %s: %w (kubectl -n %s logs daemonset/mco-server)", ControlPlaneMachine, target, err, ServerNamespace)
	}
	if err := devnet.PointAPIInt(s.Network(), target); err != nil {
		return err
	}
	for _, name := range []string{BootstrapServerProcess, BootstrapControllerProcess} {
		if err := stop(s.Processes[name], 30*time.Second); err != nil {
			return fmt.Errorf("stopping %s: %w", name, err)
		}
		delete(s.Processes, name)
	}
	if err := s.save(dir); err != nil {
		return err
	}
	if err := poll(ctx, 2*time.Minute, func() bool { return controllerPodLeads(ctx, c) }); err != nil {
		return fmt.Errorf("the controller's pod does not lead (Lease %s/mco-controller): %w (kubectl -n %s logs deployment/mco-controller)", ServerNamespace, err, ServerNamespace)
	}
	return nil
}

// controllerPodLeads reports whether a controller pod holds the leader Lease (controller-runtime
// names the holder <hostname>_<uuid>, and a pod's hostname is its name).
func controllerPodLeads(ctx context.Context, c client.Client) bool {
	var lease coordinationv1.Lease
	if err := c.Get(ctx, client.ObjectKey{Namespace: ServerNamespace, Name: "mco-controller"}, &lease); err != nil || lease.Spec.HolderIdentity == nil {
		return false
	}
	holder, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
	var pod corev1.Pod
	return c.Get(ctx, client.ObjectKey{Namespace: ServerNamespace, Name: holder}, &pod) == nil &&
		pod.Labels["app.kubernetes.io/component"] == "controller"
}

// serves reports whether a Machine Config Server answers /healthz at addr (its certificate is
// for api-int, not addr: this only asks whether it is up).
func serves(addr netip.AddrPort) bool {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a liveness probe, as the kubelet's
	resp, err := hc.Get("https://" + addr.String() + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// poll calls done every 250 ms until it returns true, timeout passes or ctx ends.
func poll(ctx context.Context, timeout time.Duration, done func() bool) error {
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return nil
}
