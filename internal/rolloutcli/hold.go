package rolloutcli

import (
	"context"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/statusview"
)

// Hold holds (undo: releases) every named node, or none: each is read before any is written.
// It writes on w a line per node (statusview.HoldChange).
func Hold(ctx context.Context, w io.Writer, c client.Client, names []string, undo bool) error {
	nodes := make([]*corev1.Node, 0, len(names))
	var errs []error
	for _, name := range names {
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
			if apierrors.IsNotFound(err) {
				err = errors.New("no such node")
			}
			errs = append(errs, fmt.Errorf("node %s: %w", name, err))
			continue
		}
		nodes = append(nodes, n)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w; no node was changed", errors.Join(errs...))
	}
	for _, n := range nodes {
		write, line := statusview.HoldChange(n, undo)
		read := n.DeepCopy()
		if write {
			// The patch answers with the Node as written: a config the node controller gave it
			// between our read and our write shows there.
			if err := setAnnotation(ctx, c, n, rolloutv1.HoldAnnotation, "true", undo); err != nil {
				return fmt.Errorf("node %s: %w", n.Name, err)
			}
		}
		if late := statusview.TargetedMeanwhile(read, n); late != "" && !undo {
			line += "; " + late
		}
		fmt.Fprintln(w, line)
	}
	return nil
}
