package daemon_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"

	"github.com/mco-dev/mco/internal/etcdindex"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestEtcdIndexedMachine: a master booted from /config/master?etcd_index=3 has the templated
// files on disk and the index in etcdindex.IndexPath, while the rendered configs in the API
// hold the templates. Its agent templates every config with that index: the first check finds
// no drift, and an update writes the next config's templates executed with 3. The same disk
// without the index file is drift, which is what an agent ignoring the index would report.
// A template for another program (OpenShift's on-prem Corefile.tmpl, which does not refer to
// the index) is written and checked as it is, on both machines.
func TestEtcdIndexedMachine(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const corefile = "/etc/kubernetes/static-pod-resources/coredns/Corefile.tmpl"
	corefile0 := "forward . {{- range $upstream := .DNSUpstreams}} {{$upstream}}{{- end}}\n"
	corefile1 := corefile0 + "cache {{.Cache}}\n"
	r0 := machineConfig("rendered-etcd-index-0", map[string]string{"/etc/etcd/member.env": "ETCD_NAME=etcd-{{.etcd_index}}\n", "/etc/etcd/plain": "x", corefile: corefile0})
	r1 := machineConfig("rendered-etcd-index-1", map[string]string{"/etc/etcd/member.env": "ETCD_NAME=etcd-{{.etcd_index}}\nSTATE={{if eq .etcd_index 0}}new{{else}}existing{{end}}\n", "/etc/etcd/plain": "y", corefile: corefile1})
	for _, mc := range []*mcfgv1.MachineConfig{r0, r1} {
		mc.SetLabels(nil)
		create(t, ctx, mc)
	}
	booted := templated(t, r0, 3)

	indexed := newRoot(t)
	provision(t, indexed, booted)
	writeRootFile(t, indexed, etcdindex.IndexPath, "3\n")
	createBareNode(t, ctx, "etcd-indexed")
	startAgent(t, "etcd-indexed", indexed)

	unindexed := newRoot(t)
	provision(t, unindexed, booted)
	createBareNode(t, ctx, "etcd-unindexed")
	startAgent(t, "etcd-unindexed", unindexed)

	awaitNode(t, ctx, "etcd-indexed", "Done in "+r0.Name, doneIn(r0.Name))
	n := awaitNode(t, ctx, "etcd-unindexed", "Degraded by drift", func(a map[string]string) bool {
		return a[protocol.StateAnnotation] == string(protocol.NodeDegraded)
	})
	if reason := n.Annotations[protocol.ReasonAnnotation]; !strings.Contains(reason, "/etc/etcd/member.env") {
		t.Errorf("the unindexed node's reason does not name the templated file: %q", reason)
	}

	annotate(t, ctx, "etcd-indexed", map[string]string{protocol.DesiredConfigAnnotation: r1.Name})
	awaitNode(t, ctx, "etcd-indexed", "Done in "+r1.Name, doneIn(r1.Name))
	mustContain(t, indexed, "/etc/etcd/member.env", "ETCD_NAME=etcd-3\nSTATE=existing\n")
	mustContain(t, indexed, "/etc/etcd/plain", "y")
	mustContain(t, indexed, corefile, corefile1)
}

// templated is mc as the server serves it to a machine with etcd_index = index.
func templated(t *testing.T, mc *mcfgv1.MachineConfig, index int) *mcfgv1.MachineConfig {
	t.Helper()
	cfg, err := ignition.Parse(mc.Spec.Config.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = etcdindex.Apply(cfg, index); err != nil {
		t.Fatal(err)
	}
	out := mc.DeepCopy()
	if out.Spec.Config.Raw, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	return out
}

func writeRootFile(t *testing.T, root, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, filepath.Dir(path)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, path), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
