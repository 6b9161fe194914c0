package rolloutcli

import (
	"context"
	"errors"
	"fmt"
	"io"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/statusview"
)

// AdoptNodes approves (undo: withdraws) the adoption of every named node, or none: each is
// checked (statusview.AdoptNode) before any is written, so a refused name leaves the others as
// they were. It writes on w a line per node.
func AdoptNodes(ctx context.Context, w io.Writer, c client.Client, names []string, undo bool) error {
	pools, _, err := statusview.ReadPoolsAndNodes(ctx, c)
	if err != nil {
		return err
	}
	var nodes []*corev1.Node
	var lines []string
	var errs []error
	for _, name := range names {
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", name, err))
			continue
		}
		line, err := statusview.AdoptNode(n, pools, undo)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		nodes, lines = append(nodes, n), append(lines, line)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w; no node was changed", errors.Join(errs...))
	}
	for i, n := range nodes {
		if err := setAnnotation(ctx, c, n, protocol.AdoptAnnotation, protocol.AdoptApproved, undo); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		fmt.Fprintln(w, lines[i])
	}
	return nil
}

// AdoptPool approves (undo: withdraws) the adoption of every node of pool name that waits for
// it, now or later, and writes on w what that approves (statusview.AdoptPool).
func AdoptPool(ctx context.Context, w io.Writer, c client.Client, name string, undo bool) error {
	pools, nodes, err := statusview.ReadPoolsAndNodes(ctx, c)
	if err != nil {
		return err
	}
	var pool *mcfgv1.MachineConfigPool
	for i := range pools {
		if pools[i].Name == name {
			pool = &pools[i]
		}
	}
	if pool == nil {
		return fmt.Errorf("mcp/%s: no such MachineConfigPool", name)
	}
	if err := setAnnotation(ctx, c, pool, protocol.AdoptAnnotation, protocol.AdoptApproved, undo); err != nil {
		return fmt.Errorf("mcp/%s: %w", name, err)
	}
	fmt.Fprintln(w, statusview.AdoptPool(pool, pools, nodes, undo))
	return nil
}
