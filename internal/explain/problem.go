package explain

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/protocol"
)

// problem is what the agent reports about a Degraded or Unreconcilable node, read as a cause
// with its remedy.
type problem struct {
	// Kind is the agent's event reason (ConfigDriftDetected, FailedToReconcile, ...) or the state.
	Kind   string
	Why    string
	Next   string
	YouCan []string
}

// driftReport is the agent's drift report: "unexpected on-disk state validating against CONFIG:
// WHAT: \"PATH\"" (internal/daemon/drift.Error wrapped by the sync).
// plantedLinkRefusal is the agent's refusal of a path behind a link planted on the host
// (internal/daemon/plantedlink): the path, and the link.
var plantedLinkRefusal = regexp.MustCompile(`nothing was drained or written: (?:file|link) (\S+): (\S+) is a symbolic link to `)

var driftReport = regexp.MustCompile(`^unexpected on-disk state validating against (\S+): (.*): "((?:[^"\\]|\\.)*)"$`)

// agentReasons are the Warning events the agent emits with a Degraded or Unreconcilable state
// (internal/daemon's failures, failure.go); the newest of them names the kind of failure.
var agentReasons = []string{
	"ConfigDriftDetected", "PreflightConfigDriftCheckFailed", "FailedToReconcile", "RebootFailed",
	"UpdateFailed", "DrainTimeout", "UnsupportedOSChange", "HostFileConflict", "HostFileUnreadable",
	"BootedConfigMismatch", "BootedSystemUnknown", "FirstBootFailed", "FailedToLoadConfig",
	"JournalStuck", "JournalAbandonFailed", "UpdateRefused", "KubeletConfigNotInEffect",
	"NodeBootFailed", "BootGuardUnavailable",
}

// diagnose reads why the agent reports node n degraded, from its state and reason annotations
// and the newest of the agent's Warning events (events newest first).
func diagnose(n *corev1.Node, events []corev1.Event) problem {
	state := protocol.NodeState(n.Annotations[protocol.StateAnnotation])
	reason := n.Annotations[protocol.ReasonAnnotation]
	kind := string(state)
	for _, e := range events {
		if e.Type == corev1.EventTypeWarning && e.InvolvedObject.Kind == "Node" && slices.Contains(agentReasons, e.Reason) {
			kind = e.Reason
			break
		}
	}
	if m := driftReport.FindStringSubmatch(reason); m != nil {
		p := drift(m[1], m[2], m[3])
		if desired := n.Annotations[protocol.DesiredConfigAnnotation]; desired != m[1] && desired != "" {
			// The preflight check: the node was about to update and found its disk changed.
			p.Kind = "PreflightConfigDriftCheckFailed"
			p.Next = fmt.Sprintf("the update to %s waits (nothing was drained or written); the agent checks again on its next sync and goes on once the disk matches %s", desired, m[1])
		}
		return p
	}
	if state == protocol.NodeUnreconcilable {
		kind = "FailedToReconcile"
	}
	logs := fmt.Sprintf("read the agent's log on the node: `journalctl -u mco-daemon` (on a cluster, the logs of its agent pod: `kubectl -n openshift-machine-config-operator get pods -l app.kubernetes.io/component=daemon --field-selector spec.nodeName=%s`)", n.Name)
	p := problem{Kind: kind, Why: fmt.Sprintf("the agent reports %s: %s", kind, orNone(reason))}
	switch kind {
	case "FailedToReconcile":
		p.Why = "the new config changes something that cannot be changed on a running node: " + orNone(reason)
		p.Next = "nothing on the node was changed (the check runs before any drain or write); the agent refuses this config on every sync until the pool's target changes"
		p.YouCan = []string{
			"revert or remove the MachineConfig change the reason names; the pool then gets a new target and this node is given it first",
			"check a change before applying it: `mco plan -f CHANGE.yaml` lists unreconcilable changes",
			"or replace the machine: a new machine boots straight into the new config",
		}
	case "RebootFailed":
		p.Next = "the config is written and waits for the reboot; the node stays Degraded until it boots into it"
		p.YouCan = []string{"reboot the node by hand (`systemctl reboot` on it); the agent verifies the booted config and reports Done", logs}
	case "DrainTimeout":
		p.Next = "the agent keeps its drain request; the drain controller keeps evicting"
		p.YouCan = []string{fmt.Sprintf("see what blocks the drain: `kubectl get pods -A --field-selector spec.nodeName=%s` and `kubectl get pdb -A`", n.Name), logs}
	case "UnsupportedOSChange", "HostFileConflict":
		p.Next = "nothing was written; the agent refuses this config on every sync until the pool's target changes"
		p.YouCan = []string{"revert the MachineConfig field the reason names (this host cannot apply it); the pool then gets a new target and this node is given it first"}
	case "UpdateRefused":
		if m := plantedLinkRefusal.FindStringSubmatch(reason); m != nil {
			p.Why = fmt.Sprintf("a symbolic link on the node is in the way of the new config's %s: %s", m[1], m[2])
			p.Next = "nothing was drained or written; the agent checks again with backoff and goes on once the link is gone, or the pool's target changes"
			p.YouCan = []string{
				fmt.Sprintf("if nothing on the node needs it, remove the link: `rm %s` on the node (the file is then written where the config says)", m[2]),
				"or delete or fix the MachineConfig that writes " + m[1] + "; the pool then gets a new target and this node is given it first",
			}
			break
		}
		p.Next = "nothing was drained or written; the agent refuses this config on every sync until the pool's target changes"
		p.YouCan = []string{
			"fix the file the reason names in its MachineConfig; the pool then gets a new target and this node is given it first",
			"check a change before applying it: `mco plan -f CHANGE.yaml` shows it refused",
		}
	case "KubeletConfigNotInEffect":
		p.Next = "the config is written, but the running kubelet does not have what the reason names; the agent checks again on every sync and reports Done once it does"
		p.YouCan = []string{
			"remove what overrides it (a later drop-in in the kubelet's --config-dir, a command-line flag) or restart a kubelet that started before the file (`systemctl restart kubelet`)",
			"a kubelet without --config-dir reads no drop-in: add it (kubeadm: KUBELET_EXTRA_ARGS in /etc/default/kubelet) and restart the kubelet",
		}
	case "UpdateFailed", "FailedToLoadConfig":
		p.Next = "the update was rolled back (the node runs its current config); the agent retries it on its next sync, and the pool starts no further node meanwhile (this one holds a maxUnavailable slot)"
		p.YouCan = []string{"fix or delete the MachineConfig the reason points at; the pool then gets a new target and this node is given it first", logs}
	case "JournalStuck", "JournalAbandonFailed":
		p.Next = "the agent retries the rollback with backoff and changes nothing else meanwhile"
		p.YouCan = []string{"repair what the reason names, then `mco daemon recover` on the node (retries now)", "or give the rollback up: `mco daemon recover --abandon` (the journal is kept for inspection)"}
	case "BootedConfigMismatch", "FirstBootFailed", "BootedSystemUnknown":
		p.Next = "the node stays Degraded until what booted matches its config"
		p.YouCan = []string{"`touch /run/machine-config-daemon-force` on the node: the agent stages what the booted system lacks and rewrites the config", logs}
	case "NodeBootFailed":
		// The reason says it all: "NodeBootFailed: <check> (<evidence>); reverted to <config>".
		p.Why = "the node rebooted into its new config and did not come back healthy in time, so its boot guard (mco-boot-guard.service, which needs neither the kubelet nor a pod) undid the update: " +
			strings.TrimPrefix(reason, "NodeBootFailed: ")
		p.Next = fmt.Sprintf("the node runs its previous config (%s) and stays cordoned; its agent does not try %s again until the pool's target changes or you ask, and the pool starts no further node meanwhile (spec.onFailure of its MachineConfigPoolRollout says whether it also rolls back)",
			orNone(n.Annotations[protocol.CurrentConfigAnnotation]), orNone(n.Annotations[protocol.DesiredConfigAnnotation]))
		p.YouCan = []string{
			"fix or delete the MachineConfig that broke the boot (`mco plan -f CHANGE.yaml` shows what a change does); the pool then gets a new target and this node goes on",
			fmt.Sprintf("or try the same config again: `mco node retry %s` (the node reboots into it, guarded again)", n.Name),
			"see what failed: the guard's record /etc/machine-config-daemon/boot-failed and `journalctl -u mco-boot-guard -u kubelet -b -1` on the node",
		}
	case "BootGuardUnavailable":
		p.Next = "nothing was written; the agent tries again on every sync (an update that reboots needs the boot guard armed first)"
		p.YouCan = []string{"make /usr/local/bin and /etc/systemd/system writable for the agent on the node, or fix what the reason names", logs}
	default:
		p.Next = "the agent re-checks on its next sync and reports Done once the cause is gone"
		p.YouCan = []string{logs}
	}
	return p
}

// drift is a file (or unit) on the node that no longer holds what config wrote.
func drift(config, what, path string) problem {
	return problem{
		Kind: "ConfigDriftDetected",
		Why:  fmt.Sprintf("%s on the node is not what %s wrote (%s): someone or something changed it on disk", path, config, what),
		Next: "the agent keeps watching the file and reports Done as soon as it matches again; until then it applies no update to this node, which counts as unavailable in its pool",
		YouCan: []string{
			fmt.Sprintf("undo the change to %s on the node (the content is in `kubectl get mc %s -o yaml`)", path, config),
			"or have the agent rewrite its whole config: `touch /run/machine-config-daemon-force` on the node",
			"or, to keep the change, put it into a MachineConfig of the node's pool (`mco plan -f` shows what it does to the nodes)",
		},
	}
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(no reason given)"
	}
	return s
}

// budgetRef and podRef find what internal/controller/drain's blocked report names: "pod NS/NAME
// cannot be evicted: PodDisruptionBudget NS/NAME".
var (
	budgetRef = regexp.MustCompile(`PodDisruptionBudget ([^;()]+)`)
	podRef    = regexp.MustCompile(`pod ([^\s;,()]+)`)
)

// blockers are the budgets and pods a drain-blocked report names, each once, in order.
func blockers(report string) (budgets, pods []string) {
	for _, m := range budgetRef.FindAllStringSubmatch(report, -1) {
		for _, b := range strings.Split(m[1], ",") {
			if b = strings.TrimSpace(b); b != "" && !slices.Contains(budgets, b) {
				budgets = append(budgets, b)
			}
		}
	}
	for _, m := range podRef.FindAllStringSubmatch(report, -1) {
		if !slices.Contains(pods, m[1]) {
			pods = append(pods, m[1])
		}
	}
	return budgets, pods
}

// kubectlRef turns "NS/NAME" into "-n NS NAME" for a kubectl command line.
func kubectlRef(ref string) string {
	if ns, name, ok := strings.Cut(ref, "/"); ok {
		return "-n " + ns + " " + name
	}
	return ref
}
