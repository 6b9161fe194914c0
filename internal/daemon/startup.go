package daemon

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/mco-dev/mco/internal/daemon/apply"
	"github.com/mco-dev/mco/internal/daemon/noderoot"
	"github.com/mco-dev/mco/internal/protocol"
)

// Files the server's first-boot config leaves for the agent.
const (
	NodeAnnotationsPath       = protocol.NodeAnnotationsPath
	NodeAnnotationsBackupPath = apply.StateDir + "/node-annotation.json.bak"
	// ForceFilePath under the root asks for a full rewrite and reboot, skipping drift checks.
	ForceFilePath = "/run/machine-config-daemon-force"
)

// startup seeds a new node's annotations from the first-boot file and clears a reboot marker
// left from before the (real or simulated) reboot.
func (a *Agent) startup(ctx context.Context) error {
	node := a.kube.node()
	if node == nil {
		return fmt.Errorf("node %s not found", a.opts.NodeName)
	}
	set := map[string]*string{}
	if node.Annotations[protocol.CurrentConfigAnnotation] == "" {
		seed, err := a.readSeed()
		if err != nil {
			return err
		}
		for k, v := range seed {
			set[k] = &v
		}
	}
	if _, ok := node.Annotations[protocol.PostConfigActionAnnotation]; ok {
		set[protocol.PostConfigActionAnnotation] = nil
	}
	if len(set) > 0 {
		if err := a.kube.patchAnnotations(ctx, set); err != nil {
			return err
		}
	}
	if ok, _ := a.root.Exists(NodeAnnotationsPath); ok {
		data, err := a.root.ReadFile(NodeAnnotationsPath)
		if err != nil {
			return err
		}
		if err := a.root.WriteFile(NodeAnnotationsBackupPath, data, noderoot.WriteOptions{Perm: 0o644}); err != nil {
			return err
		}
		return a.root.Remove(NodeAnnotationsPath, false)
	}
	return nil
}

// readSeed returns the annotations of node-annotations.json, only those the agent may set.
func (a *Agent) readSeed() (map[string]string, error) {
	info, err := a.root.Lstat(NodeAnnotationsPath)
	if err != nil || info.Type == noderoot.Missing {
		return nil, err
	}
	data, err := a.root.ReadFile(NodeAnnotationsPath)
	if err != nil {
		return nil, err
	}
	var all map[string]string
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("%s: %w", NodeAnnotationsPath, err)
	}
	seed := map[string]string{}
	for _, k := range []string{protocol.CurrentConfigAnnotation, protocol.DesiredConfigAnnotation,
		protocol.FirstPivotConfigAnnotation} {
		if v, ok := all[k]; ok {
			seed[k] = v
		}
	}
	// The server writes state Done, as OpenShift's does, before anything on the node was
	// checked. Seeding that would show the node Done until the first settle, even when the
	// first boot failed or what booted is not the config; Working until settle has verified.
	if len(seed) > 0 {
		seed[protocol.StateAnnotation] = string(protocol.NodeWorking)
	}
	return seed, nil
}

func (a *Agent) reportRecovery(rec apply.Recovery) {
	switch rec.Outcome {
	case apply.RolledBack:
		a.kube.event(corev1.EventTypeWarning, "UpdateRolledBack", "An interrupted update from %q to %q was rolled back", rec.From, rec.To)
	case apply.Completed:
		a.kube.event(corev1.EventTypeNormal, "UpdateCompleted", "An interrupted update to %q had committed; finished it", rec.To)
	}
}
