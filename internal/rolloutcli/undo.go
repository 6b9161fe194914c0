package rolloutcli

import (
	"context"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/planview"
)

// Undo reads the cluster, decides and plans pool name's rollback (changeplan.PlanUndo), writes
// its plan on w and, unless dryRun, writes the pool's rollback annotation.
func Undo(ctx context.Context, w io.Writer, c client.Client, name string, dryRun bool, now time.Time) error {
	cluster, err := changeplan.ReadCluster(ctx, c)
	if err != nil {
		return err
	}
	u, err := changeplan.PlanUndo(cluster, name, now)
	if err != nil {
		return err
	}
	if err := planview.WriteUndo(w, u); err != nil {
		return err
	}
	if dryRun {
		fmt.Fprint(w, planview.UndoNotWritten(u))
		return nil
	}
	// The optimistic lock: an undo decided from a pool that changed since (a new target, another
	// undo) is refused rather than written over it.
	if err := c.Patch(ctx, u.After, client.MergeFromWithOptions(u.Before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("writing %s on mcp/%s: %w", rolloutv1.RollbackAnnotation, name, err)
	}
	fmt.Fprint(w, planview.UndoWritten(u))
	return nil
}
