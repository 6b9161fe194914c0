package devcluster

import (
	"encoding/json"
	"net/url"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mco-dev/mco/internal/machine"
	"github.com/mco-dev/mco/internal/protocol"
)

// Units every dev machine gets from its pool's base MachineConfig, the way OpenShift's
// templates lay down machine-config-daemon-firstboot.service and the kubelet: the first-boot
// service (kernel arguments, OS image) runs before the kubelet stand-in, which registers the
// Node; the agent runs against the machine's own root.
const (
	FirstBootUnit = "mco-firstboot.service"
	KubeletUnit   = "mco-kubelet-standin.service"
	AgentUnit     = "mco-daemon.service"
)

var baseUnits = map[string]string{
	FirstBootUnit: `[Unit]
Description=mco first boot: apply what Ignition cannot (kernel arguments, OS image), reboot once if needed
ConditionPathExists=!/etc/machine-config-daemon/firstboot-done
Before=` + KubeletUnit + `

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=` + machine.MCOPath + ` daemon firstboot

[Install]
WantedBy=multi-user.target
`,
	KubeletUnit: `[Unit]
Description=Stand-in for the kubelet (dev machines only): registers the Node, Ready while the machine runs
After=` + FirstBootUnit + `

[Service]
ExecStart=` + machine.MCOPath + ` dev kubelet-standin
Restart=always
RestartSec=2

[Install]
WantedBy=multi-user.target
`,
	AgentUnit: `[Unit]
Description=mco node agent
After=` + FirstBootUnit + ` ` + KubeletUnit + `

[Service]
ExecStart=` + machine.MCOPath + ` daemon --node %H --kubeconfig /etc/kubernetes/kubeconfig --metrics-bind-address 0
Restart=always
RestartSec=2

[Install]
WantedBy=multi-user.target
`,
}

// baseConfig plays OpenShift's template controller: every role starts with one MachineConfig, so
// a pool renders before an admin adds anything. It records what the node is, like
// /etc/os-release records the OS, and lays down the machine's node units.
func baseConfig(role string) *mcfgv1.MachineConfig {
	type unit struct {
		Name     string `json:"name"`
		Enabled  bool   `json:"enabled"`
		Contents string `json:"contents"`
	}
	type file struct {
		Path     string         `json:"path"`
		Mode     int            `json:"mode"`
		Contents map[string]any `json:"contents"`
	}
	var units []unit
	for _, name := range []string{FirstBootUnit, KubeletUnit, AgentUnit} {
		units = append(units, unit{Name: name, Enabled: true, Contents: baseUnits[name]})
	}
	cfg := map[string]any{
		"ignition": map[string]any{"version": "3.4.0"},
		"storage": map[string]any{"files": []file{{Path: "/etc/mco-dev/role", Mode: 0o644,
			Contents: map[string]any{"source": "data:," + url.PathEscape("MCO_DEV_CLUSTER=1\nMCO_ROLE="+role+"\n")}}}},
		"systemd": map[string]any{"units": units},
	}
	raw, _ := json.Marshal(cfg)
	return &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "00-" + role, Labels: map[string]string{protocol.RoleLabel: role}},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: raw}},
	}
}
