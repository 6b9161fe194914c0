package render

import (
	"errors"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/protocol"
)

// A pool that templates renders only when every content that refers to etcd_index is a valid
// template; the error names the MachineConfig, so the pool keeps its last target instead of
// pointing at a config whose every etcd_index request fails. Content that does not refer to the
// index is none of its business, whatever braces it holds.
func TestEtcdIndexTemplatesChecked(t *testing.T) {
	file := func(name, role, data string) *mcfgv1.MachineConfig {
		return rawMC(name, role, `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/`+name+`","contents":{"source":"data:,`+data+`"}}]}}`)
	}
	master, _ := pools.Builtin("master")
	worker, _ := pools.Builtin("worker")
	optedIn := worker.DeepCopy()
	optedIn.Annotations = map[string]string{protocol.EtcdIndexTemplatingAnnotation: "true"}
	optedOut := master.DeepCopy()
	optedOut.Annotations = map[string]string{protocol.EtcdIndexTemplatingAnnotation: "false"}
	garbled := master.DeepCopy()
	garbled.Annotations = map[string]string{protocol.EtcdIndexTemplatingAnnotation: "yes"}
	literal := "x%7B%7Bnot%20a%20template%7D%7D" // x{{not a template}}
	withIndex := "%7B%7B.etcd_index%7D%7D%20"    // {{.etcd_index}}
	// What OpenShift's on-prem Corefile.tmpl holds: a template for the coredns static pod.
	corefile := "forward%20.%20%7B%7B-%20range%20%24upstream%20%3A%3D%20.DNSUpstreams%7D%7D%20%7B%7B%24upstream%7D%7D%7B%7B-%20end%7D%7D"

	for _, tc := range []struct {
		name string
		pool *mcfgv1.MachineConfigPool
		mcs  []*mcfgv1.MachineConfig
		want string // "" renders
	}{
		{"master with a literal {{ beside the index", master, []*mcfgv1.MachineConfig{file("00-master", "master", "ok"), file("50-master-bad", "master", withIndex+literal)},
			`MachineConfig "50-master-bad": spec.config: pool master executes the contents that refer to etcd_index as templates`},
		{"master with another program's action beside the index", master, []*mcfgv1.MachineConfig{file("50-master-bad", "master", withIndex+corefile)},
			`/etc/50-master-bad:1:36: range is not allowed`},
		{"master with a typo in a branch index 0 does not take", master, []*mcfgv1.MachineConfig{file("50-master-bad", "master", "%7B%7Bif%20.etcd_index%7D%7D%7B%7B.etcd_idx%7D%7D%7B%7Bend%7D%7D")},
			`.etcd_idx is not etcd_index, the only variable`},
		{"master with the index", master, []*mcfgv1.MachineConfig{file("50-master-etcd", "master", "ETCD_NAME=etcd-%7B%7B.etcd_index%7D%7D")}, ""},
		{"master with escaped braces and the index", master, []*mcfgv1.MachineConfig{file("50-master-esc", "master", withIndex+"%7B%7B%22%7B%7B%22%7D%7D")}, ""},
		{"master with a literal {{", master, []*mcfgv1.MachineConfig{file("00-master", "master", "ok"), file("50-master-literal", "master", literal)}, ""},
		{"master with a template for another program", master, []*mcfgv1.MachineConfig{file("00-master", "master", corefile)}, ""},
		{"worker is not templated", worker, []*mcfgv1.MachineConfig{file("50-worker", "worker", withIndex+literal)}, ""},
		{"a pool opted in", optedIn, []*mcfgv1.MachineConfig{file("50-worker", "worker", withIndex+literal)}, `MachineConfig "50-worker"`},
		{"a pool opted in, without the index", optedIn, []*mcfgv1.MachineConfig{file("50-worker", "worker", literal)}, ""},
		{"master opted out", optedOut, []*mcfgv1.MachineConfig{file("50-master-bad", "master", withIndex+literal)}, ""},
		{"a garbled annotation", garbled, []*mcfgv1.MachineConfig{file("00-master", "master", "ok")}, `metadata.annotations: MachineConfigPool master: annotation`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(tc.pool, tc.mcs, Options{})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if tc.want != "" && !strings.Contains(err.Error(), `{{"{{"}}`) && !strings.Contains(tc.want, "annotation") {
				t.Errorf("error %v does not say how to write literal braces", err)
			}
			var re *Error
			var res Errors
			if tc.want != "" && !errors.As(err, &re) && !errors.As(err, &res) {
				t.Errorf("error %T is not a render error naming object and field", err)
			}
		})
	}
}
