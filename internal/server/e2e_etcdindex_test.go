package server

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mco-dev/mco/internal/etcdindex"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// TestRealIgnitionClientEtcdIndex boots master machines with the real Ignition binary from
// /config/master?etcd_index=N: each gets its own member name in a plain file, a gzip-compressed
// file (which the server decompressed, executed and compressed again), a unit and a dropin,
// and the index for its agent, while a template for another program (a Corefile.tmpl, which
// does not refer to the index) is written as it is. A config whose template fails boots nothing.
func TestRealIgnitionClientEtcdIndex(t *testing.T) {
	const token = "e2e-master-token"
	dir := t.TempDir()
	ca := testenv.NewServingCA(t, dir)
	bootstrapDir := writeBootstrapDir(t, filepath.Join(dir, "bootstrap"), e2eIgnition)
	writeMasterPool(t, bootstrapDir, "master", "rendered-master-e2e", `{
  "ignition": {"version": "3.4.0"},
  "storage": {"files": [
    {"path": "/etc/etcd/member.env", "mode": 420, "contents": {"source": "data:,ETCD_NAME%3Detcd-%7B%7B.etcd_index%7D%7D%0A"}},
    {"path": "/etc/etcd/compressed.env", "mode": 420, "contents": {"compression": "gzip", "source": "data:;base64,`+gzipBase64(t, "INDEX={{.etcd_index}}\n")+`"}},
    {"path": "/etc/etcd/plain.txt", "mode": 420, "contents": {"source": "data:,no%20templates"}},
    {"path": "/etc/coredns/Corefile.tmpl", "mode": 420, "contents": {"source": "data:,forward%20.%20%7B%7Brange%20.DNSUpstreams%7D%7D%7B%7B.%7D%7D%7B%7Bend%7D%7D"}}
  ]},
  "systemd": {"units": [{"name": "etcd-member.service", "enabled": true,
    "contents": "[Service]\nExecStart=/usr/bin/etcd --name=etcd-{{.etcd_index}}{{if eq .etcd_index 0}} --initial-cluster-state=new{{end}}\n[Install]\nWantedBy=multi-user.target\n",
    "dropins": [{"name": "10-index.conf", "contents": "[Service]\nEnvironment=ETCD_INDEX={{.etcd_index}}\n"}]}]}
}`)
	writeMasterPool(t, bootstrapDir, "master-typo", "rendered-master-typo", `{"ignition": {"version": "3.4.0"},
  "storage": {"files": [{"path": "/etc/etcd/member.env", "contents": {"source": "data:,%7B%7B.etcd_index%7D%7D%7B%7B.etcd_idx%7D%7D"}}]}}`)
	tokensFile := filepath.Join(dir, "tokens.yaml")
	writeFile(t, tokensFile, "master:\n  token: "+token+"\nmaster-typo:\n  token: "+token+"\n")
	url := startTLSServer(t, ca, BootstrapOptions{Dir: bootstrapDir, TokensFile: tokensFile})
	pointer := func(path string) []byte {
		return bytes.ReplaceAll(pointerConfig(t, url, ca.CAPEM, token, "3.4.0"), []byte("/config/worker"), []byte(path))
	}

	for _, index := range []string{"0", "2"} {
		t.Run("etcd_index="+index, func(t *testing.T) {
			root, out, err := testenv.RunIgnition(t, pointer("/config/master?etcd_index="+index))
			if err != nil {
				t.Fatalf("ignition failed: %v\n%s", err, out)
			}
			assertFile(t, root, "/etc/etcd/member.env", "ETCD_NAME=etcd-"+index+"\n", 0o644)
			assertFile(t, root, "/etc/etcd/compressed.env", "INDEX="+index+"\n", 0o644)
			assertFile(t, root, "/etc/etcd/plain.txt", "no templates", 0o644)
			assertFile(t, root, "/etc/coredns/Corefile.tmpl", "forward . {{range .DNSUpstreams}}{{.}}{{end}}", 0o644)
			wantExec := "ExecStart=/usr/bin/etcd --name=etcd-" + index + "\n"
			if index == "0" {
				wantExec = "ExecStart=/usr/bin/etcd --name=etcd-0 --initial-cluster-state=new\n"
			}
			assertContains(t, root, "/etc/systemd/system/etcd-member.service", wantExec)
			assertContains(t, root, "/etc/systemd/system/etcd-member.service.d/10-index.conf", "ETCD_INDEX="+index+"\n")
			assertFile(t, root, etcdindex.IndexPath, index+"\n", 0o644)
		})
	}

	t.Run("without etcd_index the templates are served as written", func(t *testing.T) {
		root, out, err := testenv.RunIgnition(t, pointer("/config/master"))
		if err != nil {
			t.Fatalf("ignition failed: %v\n%s", err, out)
		}
		assertFile(t, root, "/etc/etcd/member.env", "ETCD_NAME=etcd-{{.etcd_index}}\n", 0o644)
		if _, err := os.Stat(filepath.Join(root, etcdindex.IndexPath)); !os.IsNotExist(err) {
			t.Errorf("%s written without etcd_index: %v", etcdindex.IndexPath, err)
		}
	})

	t.Run("a template that fails boots nothing", func(t *testing.T) {
		root, out, err := testenv.RunIgnition(t, pointer("/config/master-typo?etcd_index=1"))
		if err == nil {
			t.Fatalf("ignition succeeded:\n%s", out)
		}
		if !strings.Contains(out, "GET result: Internal Server Error") {
			t.Errorf("ignition output does not show the 500:\n%s", out)
		}
		if _, err := os.Stat(filepath.Join(root, "etc/etcd/member.env")); !os.IsNotExist(err) {
			t.Errorf("a file was written: %v", err)
		}
	})
}

// writeMasterPool adds a pool that templates etcd_index (master by name, others annotated),
// serving a rendered config whose Ignition config is ign.
func writeMasterPool(t *testing.T, dir, pool, rendered, ign string) {
	t.Helper()
	p := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: pool}}
	if pool != "master" {
		p.Annotations = map[string]string{protocol.EtcdIndexTemplatingAnnotation: "true"}
	}
	p.Status.Configuration.Name = rendered
	mc := &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: rendered},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(ign)}},
	}
	writeYAML(t, filepath.Join(dir, "machine-pools", pool+".yaml"), p)
	writeYAML(t, filepath.Join(dir, "machine-configs", rendered+".yaml"), mc)
}

func gzipBase64(t *testing.T, content string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}
