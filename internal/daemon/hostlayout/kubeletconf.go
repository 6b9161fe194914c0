// Package hostlayout refuses configs that would overwrite a file this host's own layout uses
// for something else. The check is pure but for the host file it asks the agent to read, and
// only when it needs it; the agent asks before any drain or write.
package hostlayout

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/internal/daemon/nodefiles"
)

// KubeletConfPath is where OpenShift's kubelet reads its KubeletConfiguration, and where a
// KubeletConfig's generated MachineConfig writes it. kubeadm keeps the kubelet's kubeconfig
// at the same path.
const KubeletConfPath = "/etc/kubernetes/kubelet.conf"

// ConflictError says which file of the host a config would overwrite and why that breaks it.
type ConflictError struct {
	Config string
	Path   string
	Why    string
	Remedy string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("cannot move to %s: it writes a KubeletConfiguration to %s, but this host's %s is %s; %s; nothing was written",
		e.Config, e.Path, e.Path, e.Why, e.Remedy)
}

// CheckKubeletConf refuses the move from current to next when next writes a
// KubeletConfiguration to KubeletConfPath over the host's own kubeconfig there. readHost
// reads the file on the node (nil when there is none); it is called only when next brings
// a KubeletConfiguration there that current does not write, so most moves read nothing, and
// its error is returned as it is. A file current writes is mco's, not the host's, and is
// left to the config; a host file that parses as neither is no kubeconfig this check can
// vouch for, so it is not refused.
func CheckKubeletConf(config string, current, next nodefiles.Set, readHost func(path string) ([]byte, error)) error {
	want, ok := next.Lookup(KubeletConfPath)
	if !ok || want.Link != "" || kindOf(want.Data) != kubeletConfiguration {
		return nil
	}
	if _, managed := current.Lookup(KubeletConfPath); managed {
		return nil
	}
	onHost, err := readHost(KubeletConfPath)
	if err != nil {
		return err
	}
	if onHost == nil || kindOf(onHost) != kubeconfig {
		return nil
	}
	return &ConflictError{
		Config: config,
		Path:   KubeletConfPath,
		Why: "the kubelet's kubeconfig (kubeadm layout: the kubelet reads its configuration from " +
			"/var/lib/kubelet/config.yaml); writing a KubeletConfiguration there would cut the node off the API server",
		Remedy: "remove the pool's KubeletConfigs (and any MachineConfig writing " + KubeletConfPath +
			"), or first move this host's kubelet to OpenShift's layout (--config=" + KubeletConfPath +
			", its kubeconfig elsewhere) and take the kubeconfig off this path",
	}
}

type fileKind int

const (
	unknown fileKind = iota
	kubeletConfiguration
	kubeconfig
)

// kindOf tells a KubeletConfiguration from a kubeconfig (YAML or JSON). A kubeconfig
// without kind (clientcmd reads those too) still has its clusters or users.
func kindOf(data []byte) fileKind {
	var top map[string]any
	if err := yaml.Unmarshal(data, &top); err != nil || top == nil {
		return unknown
	}
	kind, _ := top["kind"].(string)
	apiVersion, _ := top["apiVersion"].(string)
	switch {
	case kind == "KubeletConfiguration" && strings.HasPrefix(apiVersion, "kubelet.config.k8s.io/"):
		return kubeletConfiguration
	}
	_, clusters := top["clusters"]
	_, users := top["users"]
	if kind == "Config" || clusters || users {
		return kubeconfig
	}
	return unknown
}
