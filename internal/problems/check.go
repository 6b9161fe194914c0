package problems

import (
	"fmt"
	"io"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mco-dev/mco/internal/manifest"
	"github.com/mco-dev/mco/internal/render"
	"github.com/mco-dev/mco/internal/version"
)

// Check adds the problems `mco validate` finds in set, writing what Ignition only warns about
// on warn: every MachineConfig on its own, every pool's selectors, and every pool rendered (the
// set's and extra), which catches problems that only show when configs merge. A pool selecting
// no MachineConfig of set is not rendered: on a cluster it gets others.
func (p *List) Check(warn io.Writer, set *manifest.Set, extra []*mcfgv1.MachineConfigPool) {
	// One cache for the run: each MachineConfig is parsed here and then selected by any number
	// of pool renders, which reuse this parse.
	parses := render.NewParseCache(len(set.MachineConfigs) + 1)
	// Pools are rendered from the MachineConfigs that pass on their own, so problems that only
	// show when configs merge are found too instead of hiding behind the first bad config.
	var valid []*mcfgv1.MachineConfig
	var warned Warnings
	for _, mc := range set.MachineConfigs {
		_, ws, err := parses.ParseWithWarnings(mc)
		warned.Print(warn, set, ws)
		if err != nil {
			p.Add(Located(set, nil, err)...)
			continue
		}
		valid = append(valid, mc)
	}
	var renderable []*mcfgv1.MachineConfigPool
	for _, pool := range set.Pools {
		src, _ := set.PoolSource(pool.Name)
		errs, selectorOK := poolProblems(src, pool)
		p.Add(errs...)
		// Rendering needs only the MachineConfig selector; a bad nodeSelector must not hide
		// merge-time problems.
		if selectorOK {
			renderable = append(renderable, pool)
		}
	}
	for _, pool := range append(renderable, extra...) {
		selected, err := render.Select(pool, valid)
		if err != nil || len(selected) == 0 {
			continue // selector problems are reported above; an empty selection is fine offline
		}
		_, err = render.Render(pool, valid, render.Options{ControllerVersion: version.Commit, Parse: parses.ParseWithWarnings})
		if err != nil {
			p.Add(Located(set, pool, err)...)
		}
	}
}

// poolProblems checks a pool's selectors the way the controllers read them: a missing or empty
// selector matches nothing (OpenShift refuses to render or update such a pool).
// selectorOK says whether the machineConfigSelector, all a render needs, is usable.
func poolProblems(src manifest.Source, pool *mcfgv1.MachineConfigPool) (errs []error, selectorOK bool) {
	selectorOK = true
	for _, s := range []struct {
		field, what string
		sel         *metav1.LabelSelector
	}{
		{"spec.machineConfigSelector", "MachineConfigs", pool.Spec.MachineConfigSelector},
		{"spec.nodeSelector", "nodes", pool.Spec.NodeSelector},
	} {
		var err error
		if s.sel == nil || (len(s.sel.MatchLabels) == 0 && len(s.sel.MatchExpressions) == 0) {
			err = src.FieldError(s.field, fmt.Sprintf("missing or empty: the pool would select no %s", s.what))
		} else if _, parseErr := metav1.LabelSelectorAsSelector(s.sel); parseErr != nil {
			err = src.FieldError(s.field, parseErr.Error())
		}
		if err != nil {
			errs = append(errs, err)
			selectorOK = selectorOK && s.field != "spec.machineConfigSelector"
		}
	}
	return errs, selectorOK
}
