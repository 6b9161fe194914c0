package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	devnet "github.com/mco-dev/mco/internal/dev/network"
)

// startControlPlane starts etcd and kube-apiserver from toolsDir and waits until the API server
// is ready. It returns the API server URL.
func (s *State) startControlPlane(ctx context.Context, dir, toolsDir string, certs pki) (string, error) {
	ports, err := freePorts(3)
	if err != nil {
		return "", err
	}
	etcdPort, peerPort, apiPort := ports[0], ports[1], ports[2]
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	if err := s.start(dir, EtcdProcess, filepath.Join(toolsDir, "etcd"),
		"--name", "mco-dev", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "mco-dev="+peerURL,
		"--unsafe-no-fsync", // a throwaway dev cluster: speed over durability
	); err != nil {
		return "", err
	}
	// The API server listens on this host's address for its machines: kubelets and pods (through
	// the kubernetes Service) reach it there. Nothing of the cluster is on another address.
	layout := s.Network()
	if err := devnet.Setup(layout, apiPort); err != nil {
		return "", err
	}
	host := layout.HostAddr().String()
	apiURL := "https://" + net.JoinHostPort(host, strconv.Itoa(apiPort))
	if err := s.start(dir, APIServerProcess, filepath.Join(toolsDir, "kube-apiserver"),
		"--etcd-servers", etcdURL,
		"--bind-address", host, "--advertise-address", host, "--secure-port", strconv.Itoa(apiPort),
		"--tls-cert-file", certs.path("apiserver.crt"), "--tls-private-key-file", certs.path("apiserver.key"),
		"--client-ca-file", certs.path("ca.crt"),
		// Kubelets act as system:node:<name>, limited to their own Node and its pods.
		"--authorization-mode", "Node,RBAC",
		// kubeadm's bootstrap tokens (Secrets bootstrap-token-<id> in kube-system), with which
		// the kubeadm layout's kubelets ask for their client certificates.
		"--enable-bootstrap-token-auth",
		"--enable-admission-plugins", "NodeRestriction",
		"--service-account-issuer", apiURL,
		"--service-account-key-file", certs.path("sa.pub"),
		"--service-account-signing-key-file", certs.path("sa.key"),
		"--service-cluster-ip-range", layout.Services.String(),
		"--kubelet-preferred-address-types", "InternalIP",
		"--kubelet-client-certificate", certs.path(kubeletClientCert+".crt"),
		"--kubelet-client-key", certs.path(kubeletClientCert+".key"),
		"--allow-privileged=true",
	); err != nil {
		return "", err
	}
	s.APIServerURL = apiURL
	if err := s.save(dir); err != nil {
		return "", err
	}
	return apiURL, waitReady(ctx, apiURL, certs, s.Processes[APIServerProcess])
}

// startControllers starts kube-controller-manager (Deployments, DaemonSets, disruption budgets,
// node lifecycle, garbage collection, service account tokens, CSR signing and approval) and
// kube-scheduler, neither serving anything (secure port 0), both with the admin kubeconfig.
func (s *State) startControllers(dir, toolsDir, kubeconfig string, certs pki) error {
	if err := s.start(dir, ControllerManagerProcess, filepath.Join(toolsDir, "kube-controller-manager"),
		"--kubeconfig", kubeconfig, "--leader-elect=false", "--secure-port=0",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file", certs.path("sa.key"),
		"--root-ca-file", certs.path("ca.crt"),
		// Kubelets' client certificates: the CSR signer signs with the cluster CA, the approver
		// approves a node's first one for whoever may create nodeclient requests (the
		// bootstrap credential) and renewals for the node itself.
		"--cluster-signing-cert-file", certs.path("ca.crt"),
		"--cluster-signing-key-file", certs.path("ca.key"),
		"--controllers", "*,bootstrapsigner,tokencleaner",
	); err != nil {
		return err
	}
	return s.start(dir, SchedulerProcess, filepath.Join(toolsDir, "kube-scheduler"),
		"--kubeconfig", kubeconfig, "--leader-elect=false", "--secure-port=0")
}

// waitReady polls /readyz with the admin certificate until the API server answers ok.
func waitReady(ctx context.Context, apiURL string, certs pki, apiserver Process) error {
	caPEM, err := os.ReadFile(certs.path("ca.crt"))
	if err != nil {
		return err
	}
	admin, err := tls.LoadX509KeyPair(certs.path("admin.crt"), certs.path("admin.key"))
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{admin}},
	}}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	began := time.Now()
	last := "no answer yet"
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, apiURL+"/readyz", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = "/readyz answered " + resp.Status
		} else if ctx.Err() == nil {
			last = err.Error()
		}
		if !Alive(apiserver.PID) {
			return fmt.Errorf("kube-apiserver exited; see %s", apiserver.Log)
		}
		select {
		case <-ctx.Done():
			// The caller's deadline may end the wait first: say which, and what the process did.
			waited := "2m"
			if parent.Err() != nil {
				waited = fmt.Sprintf("%s, when the caller's deadline ended the wait (%v)", time.Since(began).Round(time.Second), parent.Err())
			}
			return fmt.Errorf("kube-apiserver not ready after %s (last: %s; %s); see %s", waited, last, processState(apiserver), apiserver.Log)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// processState says what a process is doing from /proc (its scheduler state and the kernel
// function it waits in) and how much it has logged, for an error about a process that hangs.
func processState(p Process) string {
	state := "state unknown"
	if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID)); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "State:"); ok {
				state = "state " + strings.TrimSpace(v)
			}
		}
	}
	// A running process has no wait channel: the kernel prints "0".
	if wchan, err := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", p.PID)); err == nil && len(wchan) > 0 && string(wchan) != "0" {
		state += ", waiting in " + string(wchan)
	}
	if fi, err := os.Stat(p.Log); err == nil {
		state += fmt.Sprintf(", %d bytes logged", fi.Size())
	}
	return state
}

// writeKubeconfig writes an admin kubeconfig for apiURL with the certificates embedded, so it
// works from any directory.
func writeKubeconfig(path, apiURL string, certs pki) error {
	read := func(name string) []byte {
		data, _ := os.ReadFile(certs.path(name))
		return data
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["mco-dev"] = &clientcmdapi.Cluster{Server: apiURL, CertificateAuthorityData: read("ca.crt")}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: read("admin.crt"), ClientKeyData: read("admin.key")}
	cfg.Contexts["mco-dev"] = &clientcmdapi.Context{Cluster: "mco-dev", AuthInfo: "admin"}
	cfg.CurrentContext = "mco-dev"
	return clientcmd.WriteToFile(*cfg, path)
}

// freePorts asks the kernel for n distinct free loopback ports, holding each until all are
// chosen so none is handed out twice.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
