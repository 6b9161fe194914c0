package render

import (
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/etcdindex"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
)

// checkEtcdIndexTemplates refuses a pool whose etcd_index requests would all fail: where the
// pool's contents are templated (etcdindex.Enabled: master by default), each must be a valid
// template. Executing with index 0 is enough: only the value changes between machines, never
// what a template may refer to or call. A literal "{{" in a master file is the usual cause.
func checkEtcdIndexTemplates(pool *mcfgv1.MachineConfigPool, parsed []parsedConfig, merged ignition.Config) error {
	on, err := etcdindex.Enabled(pool.Name, pool.Annotations)
	if err != nil {
		return &Error{Field: "metadata.annotations", Reason: err.Error()}
	}
	if !on {
		return nil
	}
	mergedErr := func() error { _, err := etcdindex.Apply(merged, 0); return err }()
	if mergedErr == nil {
		return nil
	}
	why := func(err error) string {
		return fmt.Sprintf("pool %s serves its contents as %s templates (annotation %s): %v; write literal braces as {{\"{{\"}}",
			pool.Name, etcdindex.Variable, protocol.EtcdIndexTemplatingAnnotation, err)
	}
	// Name the MachineConfigs whose own contents fail; the merged error stands if none alone does.
	var errs Errors
	for _, p := range parsed {
		if _, err := etcdindex.Apply(p.ign, 0); err != nil {
			errs = append(errs, &Error{MachineConfig: p.mc.Name, Field: "spec.config", Reason: why(err)})
		}
	}
	if len(errs) == 0 {
		return &Error{Field: "spec.config", Reason: why(mergedErr)}
	}
	return errs
}
