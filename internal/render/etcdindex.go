package render

import (
	"fmt"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/etcdindex"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
)

// checkEtcdIndexTemplates refuses a pool whose etcd_index requests would all fail: where the
// pool templates (etcdindex.Enabled: master by default), each content that refers to the index
// (etcdindex.RefersToIndex, the predicate the server and the agent use) must be a valid
// template; every other content is served as it is and never refuses a render. Executing with
// index 0 is enough: what a template may refer to or call is checked in every branch, and only
// the value changes between machines. A literal "{{" or another program's action beside
// {{.etcd_index}} in one content is the usual cause.
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
		return fmt.Sprintf("pool %s executes the contents that refer to %s as templates (annotation %s): %v; in such a content write literal braces as {{\"{{\"}}",
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
