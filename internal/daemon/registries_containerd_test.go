package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mco-dev/mco/internal/containerdhosts"
	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/daemon/hostlayout"
	"github.com/mco-dev/mco/internal/daemon/systemd"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

const containerdReadsCertsDir = `version = 2
[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "/etc/containerd/certs.d"
`

const blockedRegistry = oneMirror + `
[[registry]]
  location = "untrusted.example.com"
  blocked = true
`

// TestMirrorsOnContainerd: on a containerd node the config's registries.conf (OpenShift's,
// unchanged) also becomes containerd's hosts.toml for the mirrored registry: written, verified
// and reverted with the rest, with no reload, drain or reboot (containerd reads it per pull). A
// registries.conf containerd cannot follow (a blocked registry) is refused before any drain or
// write, naming the registry and the field.
func TestMirrorsOnContainerd(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const pool, name = "ctrdmirror", "ctrdmirror-0"
	hostsTOML := filepath.Join(containerdhosts.CertsDir, "apps.example.org", "hosts.toml")
	r0 := customPool(t, ctx, pool, map[string]string{"/etc/base.conf": "base"})
	root := newRoot(t)
	provision(t, root, renderedConfig(t, ctx, r0))
	if err := os.MkdirAll(filepath.Join(root, "/etc/containerd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, containerdhosts.ContainerdConfigPath), []byte(containerdReadsCertsDir), 0o644); err != nil {
		t.Fatal(err)
	}
	createReadyNode(t, ctx, name, map[string]string{"node-role.kubernetes.io/" + pool: ""})
	rt := hostlayout.RuntimeOf("containerd://1.6.20")
	ag := startAgentWith(t, name, root, func(o *daemon.Options) { o.Runtime = &rt }, nil)
	awaitNode(t, ctx, name, "Done in "+r0, doneIn(r0))

	createPoolConfig(t, ctx, pool, "50-"+pool+"-mirror", map[string]string{registriesConf: oneMirror})
	r1 := awaitPoolTarget(t, ctx, pool, r0)
	n := awaitNode(t, ctx, name, "Done in "+r1, doneIn(r1))
	if dd := n.Annotations[protocol.DesiredDrainAnnotation]; dd == protocol.DrainRequest(r1) || dd == protocol.UncordonRequest(r1) {
		t.Errorf("drained for a mirror on containerd: %s", nodeSummary(n))
	}
	if ops := ag.sd.Ops(); len(ops) != 0 || ag.reboots.Load() != 0 {
		t.Errorf("containerd reads hosts.toml per pull, yet systemd saw %v and %d reboots", ops, ag.reboots.Load())
	}
	mustContain(t, root, registriesConf, oneMirror)
	data, err := os.ReadFile(filepath.Join(root, hostsTOML))
	if err != nil || !containerdhosts.GeneratedByMCO(data) || !strings.Contains(string(data), "mirror.example.net") {
		t.Fatalf("%s: %q %v", hostsTOML, data, err)
	}

	// Drift in a derived file is drift like any other.
	if err := os.WriteFile(filepath.Join(root, hostsTOML), []byte("server = \"https://apps.example.org\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n = awaitNode(t, ctx, name, "Degraded by the drift", func(a map[string]string) bool {
		return a[protocol.StateAnnotation] == string(protocol.NodeDegraded) && strings.Contains(a[protocol.ReasonAnnotation], hostsTOML)
	})
	if err := os.WriteFile(filepath.Join(root, hostsTOML), data, 0o644); err != nil {
		t.Fatal(err)
	}
	awaitNode(t, ctx, name, "Done again in "+r1, doneIn(r1))

	// What containerd cannot express is refused, nothing written.
	createPoolConfig(t, ctx, pool, "60-"+pool+"-blocked", map[string]string{registriesConf: blockedRegistry})
	r2 := awaitPoolTarget(t, ctx, pool, r1)
	n = awaitNode(t, ctx, name, "refusing "+r2, func(a map[string]string) bool {
		return a[protocol.StateAnnotation] == string(protocol.NodeDegraded) && strings.Contains(a[protocol.ReasonAnnotation], "refusing "+r2)
	})
	for _, want := range []string{"untrusted.example.com", "blocked", "nothing was drained or written", "containerd"} {
		if !strings.Contains(n.Annotations[protocol.ReasonAnnotation], want) {
			t.Errorf("reason %q does not say %q", n.Annotations[protocol.ReasonAnnotation], want)
		}
	}
	mustContain(t, root, registriesConf, oneMirror)

	// Revert takes the derived file away with the rest.
	ag.stop()
	<-ag.done
	if _, err := daemon.Revert(ctx, root, systemd.New(root)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, hostsTOML)); !os.IsNotExist(err) {
		t.Errorf("%s left after revert (%v)", hostsTOML, err)
	}
}
