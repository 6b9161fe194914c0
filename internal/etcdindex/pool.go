package etcdindex

import (
	"fmt"

	"github.com/mco-dev/mco/internal/protocol"
)

// Enabled reports whether a pool's etcd_index requests are templated: master's are unless its
// protocol.EtcdIndexTemplatingAnnotation says "false" (the seed names master), any other
// pool's only when it says "true" (a pool whose contents were never written as templates must
// not start failing on "{{" because a pointer config carries the parameter). Any other value
// is an error naming pool, annotation and value.
func Enabled(pool string, annotations map[string]string) (bool, error) {
	value, set := annotations[protocol.EtcdIndexTemplatingAnnotation]
	switch {
	case !set:
		return pool == protocol.MasterPool, nil
	case value == "true":
		return true, nil
	case value == "false":
		return false, nil
	}
	return false, fmt.Errorf("MachineConfigPool %s: annotation %s: %q is neither \"true\" nor \"false\"",
		pool, protocol.EtcdIndexTemplatingAnnotation, value)
}
