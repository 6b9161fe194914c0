package changeplan

import (
	"slices"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/daemon/plan"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/render"
)

func withLabels(m *mcfgv1.MachineConfig, kv ...string) *mcfgv1.MachineConfig {
	for i := 0; i < len(kv); i += 2 {
		m.Labels[kv[i]] = kv[i+1]
	}
	return m
}

func names[T interface{ GetName() string }](objs []T) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.GetName()
	}
	return out
}

func TestOverlayMachineConfigs(t *testing.T) {
	live := mc(t, "50-a", files(file("/etc/a", "old\n")))
	live.UID = types.UID("uid-a")
	live.Labels["team"] = "x"             // set by someone else: kept
	live.Labels["dropped-by-apply"] = "y" // set by the last apply, absent now: removed
	live.Annotations = map[string]string{LastAppliedAnnotation: `{"metadata":{"labels":{"dropped-by-apply":"y"}}}`}
	other := mc(t, "50-b", files(file("/etc/b", "b\n")))
	applied := mc(t, "50-a", files(file("/etc/a", "new\n")))
	added := mc(t, "60-new", files(file("/etc/new", "n\n")))

	got, err := OverlayMachineConfigs([]*mcfgv1.MachineConfig{live, other}, []*mcfgv1.MachineConfig{applied, added}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"50-a", "50-b", "60-new"}; !slices.Equal(names(got), want) {
		t.Fatalf("names %v, want %v", names(got), want)
	}
	a := got[0]
	if !strings.Contains(string(a.Spec.Config.Raw), "new") || a.UID != "uid-a" {
		t.Errorf("replaced MachineConfig: spec %s, uid %q; want the manifest's spec and the live UID", a.Spec.Config.Raw, a.UID)
	}
	if a.Labels["team"] != "x" || a.Labels[protocol.RoleLabel] != "worker" {
		t.Errorf("labels %v: want the manifest's and the live ones it does not name", a.Labels)
	}
	if _, ok := a.Labels["dropped-by-apply"]; ok {
		t.Errorf("labels %v: a label the previous apply set and this one drops must go, as kubectl apply removes it", a.Labels)
	}
	if got[1] != other || strings.Contains(string(live.Spec.Config.Raw), "new") {
		t.Error("the overlay changed an input")
	}
}

func TestOverlayPoolsKeepsTheControllersFields(t *testing.T) {
	live, _ := pools.Builtin("worker")
	live.Spec.Configuration.Name = "rendered-worker-1"
	live.Status.MachineCount = 3
	applied, _ := pools.Builtin("worker")
	applied.Spec.Paused = true
	applied.Spec.Configuration.Name = "rendered-worker-stale"
	got, err := OverlayPools([]*mcfgv1.MachineConfigPool{live}, []*mcfgv1.MachineConfigPool{applied}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := got[0]; !p.Spec.Paused || p.Spec.Configuration.Name != "rendered-worker-1" || p.Status.MachineCount != 3 {
		t.Errorf("pool %+v: want the manifest's paused, the live configuration and status", p.Spec)
	}
}

func TestAffected(t *testing.T) {
	worker, _ := pools.Builtin("worker")
	master, _ := pools.Builtin("master")
	infra := infraPool()
	cluster := []*mcfgv1.MachineConfigPool{master, worker, infra}
	base := []*mcfgv1.MachineConfigPool{master, worker, infra}
	w := mc(t, "50-w", files(file("/etc/w", "w\n")))
	i := withLabels(mc(t, "50-i", files(file("/etc/i", "i\n"))), protocol.RoleLabel, "infra")
	m := withLabels(mc(t, "50-m", files(file("/etc/m", "m\n"))), protocol.RoleLabel, "master")
	clusterMCs := []*mcfgv1.MachineConfig{w, i, m}
	moved := withLabels(mc(t, "50-i", files(file("/etc/i", "i\n"))), protocol.RoleLabel, "master")
	paused := infraPool()
	paused.Spec.Paused = true
	tests := []struct {
		name         string
		applied      []*mcfgv1.MachineConfig
		appliedPools []*mcfgv1.MachineConfigPool
		want         []string
	}{
		{"worker MC reaches worker and infra", []*mcfgv1.MachineConfig{mc(t, "50-w", files())}, nil, []string{"infra", "worker"}},
		{"infra MC reaches infra only", []*mcfgv1.MachineConfig{withLabels(mc(t, "60-i", files()), protocol.RoleLabel, "infra")}, nil, []string{"infra"}},
		{"a relabelled MC leaves one pool and joins another", []*mcfgv1.MachineConfig{moved}, nil, []string{"infra", "master"}},
		{"an applied pool", nil, []*mcfgv1.MachineConfigPool{paused}, []string{"infra"}},
		{"an MC no pool selects", []*mcfgv1.MachineConfig{withLabels(mc(t, "60-x", files()), protocol.RoleLabel, "gpu")}, nil, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after, err := OverlayMachineConfigs(clusterMCs, tt.applied, nil)
			if err != nil {
				t.Fatal(err)
			}
			afterPools, err := OverlayPools(cluster, tt.appliedPools, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := Affected(base, afterPools, clusterMCs, after, tt.applied, tt.appliedPools)
			if !slices.Equal(got, tt.want) {
				t.Errorf("affected %v, want %v", got, tt.want)
			}
		})
	}
}

func infraPool() *mcfgv1.MachineConfigPool {
	p := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "infra"}, Spec: mcfgv1.MachineConfigPoolSpec{
		MachineConfigSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: protocol.RoleLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{"worker", "infra"}}}},
		NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/infra": ""}},
	}}
	return p
}

func node(name, current, desired string, labels map[string]string, extra ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{
		protocol.CurrentConfigAnnotation: current, protocol.DesiredConfigAnnotation: desired, protocol.StateAnnotation: string(protocol.NodeDone)}}}
	for i := 0; i < len(extra); i += 2 {
		n.Annotations[extra[i]] = extra[i+1]
	}
	return n
}

func TestGroupNodes(t *testing.T) {
	groups := GroupNodes([]*corev1.Node{
		node("w-2", "rendered-b", "rendered-b", nil),
		node("w-1", "rendered-b", "rendered-b", nil, protocol.PostConfigActionAnnotation, protocol.PostConfigActionRebooting),
		node("w-0", "rendered-a", "rendered-b", nil, protocol.StateAnnotation, string(protocol.NodeWorking)),
		node("w-3", "rendered-a", "rendered-a", nil, protocol.StateAnnotation, string(protocol.NodeDegraded), protocol.ReasonAnnotation, "drift in /etc/a"),
	})
	if len(groups) != 2 || groups[0].Current != "rendered-a" || groups[1].Current != "rendered-b" {
		t.Fatalf("groups %+v, want rendered-a then rendered-b", groups)
	}
	a, b := groups[0].Nodes, groups[1].Nodes
	if len(a) != 2 || a[0].Name != "w-0" || !a[0].Moving || a[0].RebootPending || !strings.Contains(strings.Join(a[0].Notes, " "), "moving from rendered-a to rendered-b, state Working") {
		t.Errorf("w-0 %+v: want moving from rendered-a to rendered-b", a[0])
	}
	if a[1].Name != "w-3" || !a[1].Moving || !strings.Contains(strings.Join(a[1].Notes, " "), "drift in /etc/a") {
		t.Errorf("w-3 %+v: want moving (Degraded is not Done) and the agent's reason", a[1])
	}
	if len(b) != 2 || b[0].Name != "w-1" || !b[0].RebootPending || b[0].Moving || b[1].Moving || b[1].RebootPending || len(b[1].Notes) != 0 {
		t.Errorf("rendered-b group %+v: want w-1 with a reboot pending, w-2 plain", b)
	}
}

// A held node is flagged, with what holding it means; a priority is noted as counted.
func TestGroupNodesHeld(t *testing.T) {
	groups := GroupNodes([]*corev1.Node{
		node("w-0", "rendered-a", "rendered-a", nil, rolloutv1.HoldAnnotation, "true", rolloutv1.UpdatePriorityAnnotation, "5"),
		node("w-1", "rendered-a", "rendered-b", nil, rolloutv1.HoldAnnotation, "true", protocol.StateAnnotation, string(protocol.NodeWorking)),
		node("w-2", "rendered-a", "rendered-a", nil, rolloutv1.HoldAnnotation, "no", rolloutv1.UpdatePriorityAnnotation, "first"),
	})
	if len(groups) != 1 || len(groups[0].Nodes) != 3 {
		t.Fatalf("groups %+v", groups)
	}
	w0, w1, w2 := groups[0].Nodes[0], groups[0].Nodes[1], groups[0].Nodes[2]
	if !w0.Held || w0.Moving || strings.Join(w0.Notes, "\n") != "held (`mco hold`): not updated until released with `mco hold --undo w-0`\nupdate priority 5 (counted as 5): nodes with a higher one are updated first" {
		t.Errorf("w-0 %+v", w0)
	}
	if !w1.Held || !strings.Contains(strings.Join(w1.Notes, " "), "the update in progress finishes first") {
		t.Errorf("w-1 %+v", w1)
	}
	if w2.Held || strings.Join(w2.Notes, "\n") != "update priority first (counted as 0): nodes with a higher one are updated first" {
		t.Errorf("w-2 %+v", w2)
	}
}

func TestInferDefaults(t *testing.T) {
	opts := render.Options{Defaults: render.Defaults{OSImageURL: "quay.example/os@sha256:1", BaseOSExtensionsContainerImage: "quay.example/ext@sha256:1"}}
	worker, _ := pools.Builtin("worker")
	master, _ := pools.Builtin("master")
	w := mc(t, "00-worker", files(file("/etc/w", "w\n")))
	override := withLabels(mc(t, "00-master", files(file("/etc/m", "m\n"))), protocol.RoleLabel, "master")
	override.Spec.OSImageURL = "quay.example/custom@sha256:2"
	generated := withLabels(mc(t, "99-worker-generated", files()), protocol.RoleLabel, "worker")
	generated.Annotations = map[string]string{protocol.GeneratedByControllerVersionAnnotation: "v1"}
	generated.Spec.OSImageURL = "ignored: generated configs never set the image"
	all := []*mcfgv1.MachineConfig{w, override, generated}
	target := func(p *mcfgv1.MachineConfigPool) *mcfgv1.MachineConfigPool {
		p = p.DeepCopy()
		res, err := render.Render(p, all, opts)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, res.Config)
		p.Spec.Configuration.Name = res.Config.Name
		p.Spec.Configuration.Source = res.Sources
		return p
	}
	m, wk := target(master), target(worker)

	d, notes := InferDefaults([]*mcfgv1.MachineConfigPool{m, wk}, all)
	if d != opts.Defaults {
		t.Errorf("defaults %+v, want %+v: master's image is its admin's, worker's is the controller's", d, opts.Defaults)
	}
	if !strings.Contains(strings.Join(notes, "\n"), `osImageURL "quay.example/os@sha256:1" taken from `+wk.Spec.Configuration.Name+" (pool worker)") {
		t.Errorf("notes %v do not say the image came from worker", notes)
	}

	d, notes = InferDefaults([]*mcfgv1.MachineConfigPool{wk}, all)
	if d != opts.Defaults || len(notes) != 1 || !strings.HasPrefix(notes[0], "default images (") {
		t.Errorf("from worker alone: %+v, notes %v; want both images in one note", d, notes)
	}

	d, notes = InferDefaults([]*mcfgv1.MachineConfigPool{m}, all)
	if d.OSImageURL != "" || d.BaseOSExtensionsContainerImage != opts.Defaults.BaseOSExtensionsContainerImage {
		t.Errorf("from master alone: %+v; its image is an override, so no default image is known", d)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "no pool's rendered config shows the controller's default osImageURL") {
		t.Errorf("notes %v do not say the default image is unknown", notes)
	}
}

// liveCluster is a worker pool of three nodes on two rendered configs (one behind), an infra
// pool of one node, and their MachineConfigs.
func liveCluster(t *testing.T) (Cluster, map[string]string) {
	t.Helper()
	worker, _ := pools.Builtin("worker")
	infra := infraPool()
	chrony := mc(t, "50-worker-chrony", files(file("/etc/chrony.conf", "pool a.example.org\n")))
	base := mc(t, "00-worker", files(file("/etc/motd", "hello\n")))
	oldChrony := mc(t, "50-worker-chrony", files(file("/etc/chrony.conf", "pool old.example.org\n")))
	infraMC := withLabels(mc(t, "10-infra", files(file("/etc/infra", "infra\n"))), protocol.RoleLabel, "infra")
	mcs := []*mcfgv1.MachineConfig{base, chrony, infraMC}
	rendered := map[string]string{}
	for _, r := range []struct {
		key  string
		pool *mcfgv1.MachineConfigPool
		mcs  []*mcfgv1.MachineConfig
	}{
		{"worker", worker, []*mcfgv1.MachineConfig{base, chrony}},
		{"worker-old", worker, []*mcfgv1.MachineConfig{base, oldChrony}},
		{"infra", infra, []*mcfgv1.MachineConfig{base, chrony, infraMC}},
	} {
		res, err := render.Render(r.pool, r.mcs, render.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rendered[r.key] = res.Config.Name
		mcs = append(mcs, res.Config)
		if r.key != "worker-old" {
			r.pool.Spec.Configuration.Name = res.Config.Name
			r.pool.Spec.Configuration.Source = res.Sources
		}
	}
	workerLabels := map[string]string{protocol.WorkerRoleLabel: ""}
	infraLabels := map[string]string{protocol.WorkerRoleLabel: "", "node-role.kubernetes.io/infra": ""}
	return Cluster{
		Pools:          []*mcfgv1.MachineConfigPool{worker, infra},
		MachineConfigs: mcs,
		Nodes: []*corev1.Node{
			node("worker-0", rendered["worker"], rendered["worker"], workerLabels),
			node("worker-1", rendered["worker"], rendered["worker"], workerLabels, protocol.PostConfigActionAnnotation, protocol.PostConfigActionRebooting),
			node("worker-2", rendered["worker-old"], rendered["worker"], workerLabels, protocol.StateAnnotation, string(protocol.NodeWorking)),
			node("infra-0", rendered["infra"], rendered["infra"], infraLabels),
		},
		Policies: plan.DefaultPolicies(),
	}, rendered
}

func TestLive(t *testing.T) {
	c, rendered := liveCluster(t)
	newChrony := mc(t, "50-worker-chrony", files(file("/etc/chrony.conf", "pool b.example.org\n")))
	sshKey := mc(t, "60-worker-ssh", map[string]any{"passwd": map[string]any{"users": []any{
		map[string]any{"name": "core", "sshAuthorizedKeys": []any{"ssh-ed25519 AAAA admin@example.com"}}}}})

	t.Run("a replaced and an added MachineConfig", func(t *testing.T) {
		r, err := Live(c, Applied{MachineConfigs: []*mcfgv1.MachineConfig{newChrony, sshKey}}, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Pools) != 2 || r.Pools[0].Pool != "infra" || r.Pools[1].Pool != "worker" {
			t.Fatalf("pools %+v, want infra and worker", r.Pools)
		}
		w := r.Pools[1]
		if w.Target != rendered["worker"] || w.Rendered == w.Target || !slices.Equal(w.Sources, []string{"00-worker", "50-worker-chrony", "60-worker-ssh"}) {
			t.Errorf("worker: target %s, rendered %s, sources %v", w.Target, w.Rendered, w.Sources)
		}
		if len(w.Groups) != 2 || w.Groups[0].Current > w.Groups[1].Current {
			t.Fatalf("worker groups %+v, want two sorted by config", w.Groups)
		}
		for _, g := range w.Groups {
			if g.Plan == nil || g.Plan.Disruption != "drain+reboot" || !g.Plan.SSHKeysChanged || g.Plan.Rendered != w.Rendered {
				t.Errorf("group %s: plan %+v, want drain+reboot for chrony.conf with the SSH key, to %s", g.Current, g.Plan, w.Rendered)
			}
			if g.Plan != nil && !strings.Contains(g.Plan.Summary, "from 3 MachineConfigs") {
				t.Errorf("group %s: summary %q does not count the sources the plan carries", g.Current, g.Plan.Summary)
			}
			want := []string{"worker-0", "worker-1"}
			if g.Current == rendered["worker-old"] {
				want = []string{"worker-2"}
			}
			if !slices.Equal(nodeNames(g), want) {
				t.Errorf("group %s: nodes %v, want %v", g.Current, nodeNames(g), want)
			}
		}
		if i := r.Pools[0]; len(i.Groups) != 1 || !slices.Equal(nodeNames(i.Groups[0]), []string{"infra-0"}) || i.Groups[0].Plan.Disruption != "drain+reboot" {
			t.Errorf("infra %+v: want infra-0 alone, drained and rebooted", i)
		}
		if r.ExitCode() != 1 || !strings.Contains(r.Why(), "worker-0, worker-1 would be drained and rebooted") {
			t.Errorf("exit %d (%s), want 1 naming the nodes", r.ExitCode(), r.Why())
		}
		if !slices.Contains(r.Notes, ForceFileNote) {
			t.Errorf("notes %v lack what only the node knows", r.Notes)
		}
	})

	t.Run("an SSH key alone disrupts nothing but the pending reboot", func(t *testing.T) {
		r, err := Live(c, Applied{MachineConfigs: []*mcfgv1.MachineConfig{sshKey}}, "worker")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Pools) != 1 {
			t.Fatalf("--pool worker gave %d pools", len(r.Pools))
		}
		for _, g := range r.Pools[0].Groups {
			if g.Current == rendered["worker"] && g.Plan.Disruption != "none" {
				t.Errorf("group %s: %s, want none", g.Current, g.Plan.Disruption)
			}
		}
		if r.ExitCode() != 1 || !strings.Contains(r.Why(), "worker-1 has a reboot pending") {
			t.Errorf("exit %d (%s): want 1 for worker-1's queued reboot and worker-2's old chrony.conf", r.ExitCode(), r.Why())
		}
	})

	t.Run("keys Ignition ignores are warnings: same render, same exit code", func(t *testing.T) {
		clean, err := Live(c, Applied{MachineConfigs: []*mcfgv1.MachineConfig{sshKey}}, "worker")
		if err != nil {
			t.Fatal(err)
		}
		leftover := mc(t, "60-worker-ssh", map[string]any{"networkd": map[string]any{"units": []any{}}, "passwd": map[string]any{"users": []any{
			map[string]any{"name": "core", "sshAuthorizedKeys": []any{"ssh-ed25519 AAAA admin@example.com"}}}}})
		r, err := Live(c, Applied{MachineConfigs: []*mcfgv1.MachineConfig{leftover}}, "worker")
		if err != nil {
			t.Fatal(err)
		}
		w := r.Pools[0]
		if w.Error != "" || w.Rendered != clean.Pools[0].Rendered || r.ExitCode() != clean.ExitCode() {
			t.Errorf("rendered %s (error %q), exit %d; want %s and exit %d as without the key", w.Rendered, w.Error, r.ExitCode(), clean.Pools[0].Rendered, clean.ExitCode())
		}
		if len(w.Warnings) != 1 || w.Warnings[0].MachineConfig != "60-worker-ssh" || w.Warnings[0].Field != "spec.config.networkd" {
			t.Errorf("warnings %+v, want networkd of 60-worker-ssh", w.Warnings)
		}
	})

	t.Run("an unknown pool", func(t *testing.T) {
		if _, err := Live(c, Applied{}, "gpu"); err == nil || !strings.Contains(err.Error(), `no MachineConfigPool "gpu"`) {
			t.Errorf("err %v", err)
		}
	})

	t.Run("an unrenderable change", func(t *testing.T) {
		bad := mc(t, "70-worker-bad", files(file("relative/path", "x")))
		r, err := Live(c, Applied{MachineConfigs: []*mcfgv1.MachineConfig{bad}}, "")
		if err != nil {
			t.Fatal(err)
		}
		if r.ExitCode() != 2 || r.Pools[0].Error == "" || !strings.Contains(r.Why(), "does not render") {
			t.Errorf("exit %d (%s), want 2", r.ExitCode(), r.Why())
		}
	})
}

func TestFirstNames(t *testing.T) {
	for in, want := range map[string]string{"a": "a", "a,b,c": "a, b, c", "a,b,c,d,e": "a, b, c and 2 more"} {
		if got := firstNames(strings.Split(in, ",")); got != want {
			t.Errorf("firstNames(%s) = %q, want %q", in, got, want)
		}
	}
}

func nodeNames(g NodeGroup) []string {
	out := make([]string, len(g.Nodes))
	for i, n := range g.Nodes {
		out[i] = n.Name
	}
	return out
}

// A manifest's left-out fields: kept from the live object, unless the previous apply set them.
func TestOverlayKeepsWhatTheManifestLeavesOut(t *testing.T) {
	written := []byte(`{"apiVersion":"machineconfiguration.openshift.io/v1","kind":"MachineConfig","metadata":{"name":"50-a","labels":{"machineconfiguration.openshift.io/role":"worker"}},"spec":{"kernelArguments":["audit=1"]}}`)
	manifest := mc(t, "50-a", map[string]any{}, "audit=1")
	for _, tt := range []struct {
		name        string
		lastApplied string
		wantConfig  bool
	}{
		{"created without apply: spec.config stays", "", true},
		{"applied before without spec.config: it stays", `{"metadata":{"name":"50-a"},"spec":{"kernelArguments":["nosmt"]}}`, true},
		{"applied before with spec.config: apply removes it", `{"metadata":{"name":"50-a"},"spec":{"config":{"ignition":{"version":"3.5.0"}},"kernelArguments":["nosmt"]}}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			live := mc(t, "50-a", files(file("/etc/a", "a\n")), "nosmt")
			if tt.lastApplied != "" {
				live.Annotations = map[string]string{LastAppliedAnnotation: tt.lastApplied}
			}
			got, err := OverlayMachineConfigs([]*mcfgv1.MachineConfig{live}, []*mcfgv1.MachineConfig{manifest}, Manifests{Key("MachineConfig", "50-a"): written})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got[0].Spec.KernelArguments, []string{"audit=1"}) {
				t.Errorf("kernelArguments %v, want the manifest's", got[0].Spec.KernelArguments)
			}
			if hasConfig := strings.Contains(string(got[0].Spec.Config.Raw), "/etc/a"); hasConfig != tt.wantConfig {
				t.Errorf("spec.config %s; want it kept: %v", got[0].Spec.Config.Raw, tt.wantConfig)
			}
		})
	}
}
