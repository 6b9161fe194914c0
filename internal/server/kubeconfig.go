package server

import (
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// BuildKubeconfig is the kubeconfig a new machine's kubelet uses to request its client
// certificate: the API server URL, the CA that signs the API server's certificate, and the
// bootstrap token. Named like OpenShift's (cluster "local", user "kubelet") so existing
// tooling that inspects it keeps working.
func BuildKubeconfig(server string, ca []byte, token string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["kubelet"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["kubelet"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "kubelet"}
	cfg.CurrentContext = "kubelet"
	return clientcmd.Write(*cfg)
}
