package problems

import (
	"errors"
	"fmt"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/render"
)

// Located turns a render failure into messages about the admin's files: an error about a
// MachineConfig is reported at the file and document it came from, an error about the pool's
// selector at the pool manifest (when the pool came from one), anything else as being about
// the pool.
func Located(set *manifest.Set, pool *mcfgv1.MachineConfigPool, err error) []error {
	var list render.Errors
	var one *render.Error
	var noSelector *render.ErrNoSelector
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = render.Errors{one}
	case errors.As(err, &noSelector):
		list = render.Errors{{Field: "spec.machineConfigSelector", Reason: "empty: refusing to select every MachineConfig"}}
	default:
		return []error{err}
	}
	out := make([]error, 0, len(list))
	for _, e := range list {
		if src, ok := set.MachineConfigSource(e.MachineConfig); ok && e.MachineConfig != "" {
			// Ignition's positions (e.Line, e.Column) count in spec.config re-serialised as one-line
			// JSON, which the admin never wrote; the file position FieldError finds replaces them.
			out = append(out, src.FieldError(e.Field, e.Reason))
			continue
		}
		if pool == nil || e.MachineConfig != "" {
			out = append(out, e)
			continue
		}
		if src, ok := set.PoolSource(pool.Name); ok && strings.HasPrefix(e.Field, "spec.machineConfigSelector") {
			out = append(out, src.FieldError(e.Field, e.Reason))
			continue
		}
		// About the pool or the merged result: lead with the pool, which render puts in the reason.
		msg := strings.TrimPrefix(e.Reason, "pool "+pool.Name+": ")
		if e.Field != "" {
			msg = e.Field + ": " + msg
		}
		out = append(out, fmt.Errorf("pool %s: %s", pool.Name, msg))
	}
	return out
}
