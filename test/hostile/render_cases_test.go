package hostile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/render"
)

func testPool(name string) *mcfgv1.MachineConfigPool {
	return &mcfgv1.MachineConfigPool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: mcfgv1.MachineConfigPoolSpec{
			MachineConfigSelector: &metav1.LabelSelector{MatchLabels: map[string]string{protocol.RoleLabel: name}},
			NodeSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/" + name: ""}},
		},
	}
}

const baseConfig = `{"ignition":{"version":"3.5.0"},"storage":{"files":[{"path":"/etc/chrony.conf","mode":420,"contents":{"source":"data:,pool%20a"}}]}}`

// file35 is a spec 3.5 config with one file entry (a JSON object's fields).
func file35(entry string) string {
	return ign("3.5.0", `,"storage":{"files":[{`+entry+`}]}`)
}

// renderCase is a MachineConfig render.Render must refuse when it joins a valid pool: with
// day2, the pool already runs a rendered config (without it), so the change is made to
// running nodes.
type renderCase struct {
	name, raw     string
	mutate        func(*mcfgv1.MachineConfig)
	day2          bool
	field, reason string
}

func renderCases() []hostileCase {
	rows := []renderCase{
		{name: "duplicate file paths", raw: ign("3.5.0", `,"storage":{"files":[{"path":"/etc/x","contents":{"source":"data:,a"}},{"path":"/etc/x","contents":{"source":"data:,b"}}]}`),
			field: "spec.config.storage.files.1", reason: "duplicate entry defined"},
		{name: "a file and a directory at one path", raw: ign("3.5.0", `,"storage":{"files":[{"path":"/etc/x"}],"directories":[{"path":"/etc/x"}]}`),
			field: "spec.config.storage.files.0", reason: "duplicate entry defined"},
		{name: "relative path", raw: file35(`"path":"etc/x","contents":{"source":"data:,x"}`), field: "spec.config.storage.files.0.path", reason: "path not absolute"},
		{name: "dot-dot path", raw: file35(`"path":"/etc/../root/.ssh/authorized_keys","contents":{"source":"data:,x"}`), field: "spec.config.storage.files.0.path", reason: "path is not fully simplified"},
		{name: "mode past 07777", raw: file35(`"path":"/etc/x","mode":4096`), field: "spec.config.storage.files.0.mode", reason: "illegal file mode"},
		{name: "negative mode", raw: file35(`"path":"/etc/x","mode":-1`), field: "spec.config.storage.files.0.mode", reason: "illegal file mode"},
		{name: "setuid mode", raw: file35(`"path":"/usr/local/bin/x","mode":2541`), field: "spec.config.storage.files.0.mode", reason: "has bits beyond 0777"},
		{name: "directory mode past 0777", raw: ign("3.5.0", `,"storage":{"directories":[{"path":"/etc/x.d","mode":1023}]}`), field: "spec.config.storage.directories.0.mode", reason: "has bits beyond 0777"},
		{name: "file into /proc", raw: file35(`"path":"/proc/sysrq-trigger","contents":{"source":"data:,b"}`), field: "spec.config.storage.files.0.path", reason: "under /proc, a kernel file system"},
		{name: "file into /sys", raw: file35(`"path":"/sys/power/state","contents":{"source":"data:,off"}`), field: "spec.config.storage.files.0.path", reason: "under /sys, a kernel file system"},
		{name: "directory /dev", raw: ign("3.5.0", `,"storage":{"directories":[{"path":"/dev"}]}`), field: "spec.config.storage.directories.0.path", reason: "under /dev, a kernel file system"},
		{name: "link into /dev", raw: ign("3.5.0", `,"storage":{"links":[{"path":"/dev/sda9","target":"/etc/x"}]}`), field: "spec.config.storage.links.0.path", reason: "under /dev, a kernel file system"},
		{name: "NUL in a path", raw: file35(`"path":"/etc/x\u0000y","contents":{"source":"data:,x"}`), field: "spec.config.storage.files.0.path", reason: "contains a control character"},
		{name: "newline in a path", raw: file35(`"path":"/etc/x\ny","contents":{"source":"data:,x"}`), field: "spec.config.storage.files.0.path", reason: "contains a control character"},
		{name: "unit name escaping the unit directory", raw: ign("3.5.0", `,"systemd":{"units":[{"name":"../../../proc/x.service","contents":"[Service]\nExecStart=/bin/true\n"}]}`),
			field: "spec.config.systemd.units.0.name", reason: "is not a file name"},
		{name: "dropin name escaping the unit directory", raw: ign("3.5.0", `,"systemd":{"units":[{"name":"crio.service","dropins":[{"name":"../../../sysctl.d/99-x.conf","contents":"x"}]}]}`),
			field: "spec.config.systemd.units.0.dropins.0.name", reason: "is not a file name"},
		{name: "remote file source", raw: file35(`"path":"/etc/x","contents":{"source":"https://attacker.example/x"}`), field: "spec.config.storage.files.0.contents.source", reason: "only inline data: URLs"},
		{name: "the agent's force file", raw: file35(`"path":"/run/machine-config-daemon-force","contents":{"source":"data:,"}`), day2: true,
			field: "spec.config.storage.files", reason: "disables the node agent's safety checks"},
		{name: "day-2 storage.disks", raw: ign("3.5.0", `,"storage":{"disks":[{"device":"/dev/sdb","wipeTable":true}]}`), day2: true, field: "spec.config.storage.disks", reason: "disk layout can only be set at install time"},
		{name: "day-2 storage.filesystems", raw: ign("3.5.0", `,"storage":{"filesystems":[{"device":"/dev/sdb1","format":"xfs","path":"/var/data"}]}`), day2: true, field: "spec.config.storage.filesystems", reason: "disk layout can only be set at install time"},
		{name: "day-2 storage.luks", raw: ign("3.5.0", `,"storage":{"luks":[{"name":"data","device":"/dev/sdb","clevis":{"tpm2":true}}]}`), day2: true, field: "spec.config.storage.luks", reason: "disk layout can only be set at install time"},
		{name: "day-2 storage.raid", raw: ign("3.5.0", `,"storage":{"raid":[{"name":"md0","level":"raid1","devices":["/dev/sdb","/dev/sdc"]}]}`), day2: true, field: "spec.config.storage.raid", reason: "disk layout can only be set at install time"},
		{name: "unknown kernel type", raw: ign("3.5.0", ""), mutate: func(mc *mcfgv1.MachineConfig) { mc.Spec.KernelType = "../../boot/evil" }, field: "spec.kernelType", reason: "unknown kernel type"},
		{name: "unknown extension", raw: ign("3.5.0", ""), mutate: func(mc *mcfgv1.MachineConfig) { mc.Spec.Extensions = []string{"nmap; rm -rf /"} }, field: "spec.extensions.0", reason: "unsupported extension"},
	}
	var cases []hostileCase
	for _, r := range rows {
		mcName := "50-worker-" + slug(r.name)
		cases = append(cases, hostileCase{
			entry: "render.Render", name: r.name,
			want: []string{`MachineConfig "` + mcName + `"`, r.field, r.reason},
			run: func(t *testing.T) error {
				bad := machineConfig(mcName, "worker", r.raw)
				if r.mutate != nil {
					r.mutate(bad)
				}
				return renderRefuses(t, testPool("worker"), []*mcfgv1.MachineConfig{bad}, r.day2)
			},
		})
	}
	cases = append(cases, hostileCase{
		entry: "render.Render", name: "rendered config over the size limit",
		want: []string{"pool worker", "rendered config is", fmt.Sprintf("over the %d byte limit", render.MaxRenderedSize)},
		run: func(t *testing.T) error {
			// Each under the limit on its own; together past it.
			half := strings.Repeat("a", render.MaxRenderedSize/2+1024)
			var mcs []*mcfgv1.MachineConfig
			for _, n := range []string{"60-worker-big-a", "61-worker-big-b"} {
				mcs = append(mcs, machineConfig(n, "worker", file35(`"path":"/etc/`+n+`","contents":{"source":"data:,`+half+`"}`)))
			}
			return renderRefuses(t, testPool("worker"), mcs, false)
		},
	})
	return append(cases, renderControllerCases()...)
}

// renderRefuses renders pool from a valid base and bad, which must fail without a result;
// with day2 the base alone is rendered first and is what nodes run.
func renderRefuses(t *testing.T, pool *mcfgv1.MachineConfigPool, bad []*mcfgv1.MachineConfig, day2 bool) error {
	t.Helper()
	base := machineConfig("00-"+pool.Name+"-base", pool.Name, baseConfig)
	var opts render.Options
	if day2 {
		current, err := render.Render(pool, []*mcfgv1.MachineConfig{base}, opts)
		if err != nil {
			t.Fatalf("the base config does not render: %v", err)
		}
		opts.Current = current.Config
	}
	res, err := render.Render(pool, append([]*mcfgv1.MachineConfig{base}, bad...), opts)
	if res != nil {
		t.Errorf("rendered %s despite the error %v", res.Config.Name, err)
	}
	return err
}

// renderControllerCases give a bad MachineConfig to the render controller through the API
// server: the pool reports RenderDegraded naming the MachineConfig, the field and the reason,
// keeps its target, and no rendered config is created for it.
func renderControllerCases() []hostileCase {
	rows := []struct{ name, raw, field, reason string }{
		{"file into /proc", file35(`"path":"/proc/sys/kernel/sysrq","contents":{"source":"data:,1"}`), "spec.config.storage.files.0.path", "under /proc, a kernel file system"},
		{"day-2 storage.disks", ign("3.5.0", `,"storage":{"disks":[{"device":"/dev/sdb","wipeTable":true}]}`), "spec.config.storage.disks", "disk layout can only be set at install time"},
	}
	var cases []hostileCase
	for _, r := range rows {
		role := "hostile-" + slug(r.name)
		mcName := "50-" + role
		cases = append(cases, hostileCase{
			entry: "render controller", name: r.name, integration: true,
			want: []string{mcName, r.field, r.reason},
			run: func(t *testing.T) error {
				return renderDegrades(t, role, machineConfig(mcName, role, r.raw))
			},
		})
	}
	return cases
}

func renderDegrades(t *testing.T, role string, bad *mcfgv1.MachineConfig) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	create(t, ctx, machineConfig("00-"+role+"-base", role, baseConfig))
	create(t, ctx, testPool(role))
	target := waitPool(t, ctx, role, "a first render", func(p *mcfgv1.MachineConfigPool) bool { return p.Spec.Configuration.Name != "" }).Spec.Configuration.Name
	renderedBefore := renderedOf(t, ctx, role)

	create(t, ctx, bad)
	degraded := waitPool(t, ctx, role, "RenderDegraded", func(p *mcfgv1.MachineConfigPool) bool {
		c := poolcondition.Get(&p.Status, mcfgv1.MachineConfigPoolRenderDegraded)
		return c != nil && c.Status == "True" && strings.Contains(c.Message, bad.Name)
	})
	if got := degraded.Spec.Configuration.Name; got != target {
		t.Errorf("the pool moved from %s to %s on a bad MachineConfig", target, got)
	}
	// A render that got as far as creating a config would have done so before the condition.
	if after := renderedOf(t, ctx, role); after != renderedBefore {
		t.Errorf("rendered configs of the pool went from %v to %v", renderedBefore, after)
	}
	return errors.New(poolcondition.Get(&degraded.Status, mcfgv1.MachineConfigPoolRenderDegraded).Message)
}

// renderedOf names the rendered configs the pool owns.
func renderedOf(t *testing.T, ctx context.Context, pool string) string {
	t.Helper()
	var list mcfgv1.MachineConfigList
	if err := k8s.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mc := range list.Items {
		for _, o := range mc.OwnerReferences {
			if o.Kind == "MachineConfigPool" && o.Name == pool {
				names = append(names, mc.Name)
			}
		}
	}
	return strings.Join(names, ",")
}

func waitPool(t *testing.T, ctx context.Context, name, what string, cond func(*mcfgv1.MachineConfigPool) bool) *mcfgv1.MachineConfigPool {
	t.Helper()
	var p mcfgv1.MachineConfigPool
	for ctx.Err() == nil {
		if err := k8s.Get(ctx, client.ObjectKey{Name: name}, &p); err == nil && cond(&p) {
			return &p
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("pool %s: timed out waiting for %s; spec.configuration=%s conditions=%+v", name, what, p.Spec.Configuration.Name, p.Status.Conditions)
	return nil
}

// create creates obj and deletes it when the test ends.
func create(t *testing.T, ctx context.Context, obj client.Object) {
	t.Helper()
	if err := k8s.Create(ctx, obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), obj) })
}
