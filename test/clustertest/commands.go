package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubectl/pkg/util/podutils"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Run returns a command's standard output; the error carries its standard error.
func Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// ReadyPods are the Ready pods in namespace default matching labels, by UID, as "<name> on
// <node>" (none on an API error).
func ReadyPods(ctx context.Context, c client.Client, labels map[string]string) map[types.UID]string {
	ready, _ := ListReadyPods(ctx, c, labels)
	return ready
}

// ListReadyPods is ReadyPods, with the API's error.
func ListReadyPods(ctx context.Context, c client.Client, labels map[string]string) (map[types.UID]string, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace("default"), client.MatchingLabels(labels)); err != nil {
		return nil, err
	}
	out := map[types.UID]string{}
	for i := range pods.Items {
		if p := &pods.Items[i]; p.DeletionTimestamp == nil && podutils.IsPodReady(p) {
			out[p.UID] = p.Name + " on " + p.Spec.NodeName
		}
	}
	return out, nil
}
