package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/changeplan"
	"github.com/mco-dev/mco/internal/daemon/plan"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// planned is what `mco plan` (changeplan.Between, under the cluster's MachineConfiguration read
// as the agent reads it) says about moving a node of pool from one rendered config to another.
// from is the rendered config the node ran, read while it was in use: once the node has moved
// on, the render controller may have garbage-collected it.
func planned(t *testing.T, ctx context.Context, pool string, from *mcfgv1.MachineConfig, to string) *changeplan.Plan {
	t.Helper()
	policies, _, err := plan.ClusterPolicies(ctx, env.Client)
	if err != nil {
		t.Fatal(err)
	}
	p, err := changeplan.Between(pool, from, renderedConfig(t, ctx, to), policies)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestUnreadableRegistriesConfIsRefused: a registries.conf containers/image cannot read is
// refused before any drain or write, as OpenShift refuses it (it decodes the file before
// writing): Degraded naming the file and the TOML error, a Warning event, nothing drained or
// written; `mco plan` says refused, with the agent's reason. Once the config is withdrawn the
// node is Done again.
func TestUnreadableRegistriesConfIsRefused(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const pool, name = "badregistries", "badregistries-0"
	r0 := customPool(t, ctx, pool, map[string]string{registriesConf: oneMirror})
	root := newRoot(t)
	provision(t, root, renderedConfig(t, ctx, r0))
	createReadyNode(t, ctx, name, map[string]string{"node-role.kubernetes.io/" + pool: ""})
	ag := startAgent(t, name, root)
	awaitNode(t, ctx, name, "Done in "+r0, doneIn(r0))
	before := renderedConfig(t, ctx, r0)

	broken := "[[registry]\n  location = \"apps.example.org\"\n"
	createPoolConfig(t, ctx, pool, "50-"+pool+"-broken", map[string]string{registriesConf: broken, "/etc/extra.conf": "x"})
	r1 := awaitPoolTarget(t, ctx, pool, r0)
	want := "refusing " + r1 + ", nothing was drained or written: the new config's /etc/containers/registries.conf cannot be read by containers/image, so crio could pull no image: toml: "
	n := awaitNode(t, ctx, name, "Degraded by the refusal", degradedBy(want))
	if ev := awaitEvent(t, ctx, name, "UpdateRefused"); ev.Type != "Warning" || !strings.Contains(ev.Message, r1) {
		t.Errorf("event %s %q", ev.Type, ev.Message)
	}
	if p := planned(t, ctx, pool, before, r1); p.Disruption != "refused" || len(p.Refused) != 1 || !strings.Contains(n.Annotations[protocol.ReasonAnnotation], p.Refused[0]) {
		t.Errorf("mco plan: disruption %q, refused %q; the agent: %q", p.Disruption, p.Refused, n.Annotations[protocol.ReasonAnnotation])
	}
	time.Sleep(2 * time.Second) // give a wrong agent time to go on
	n = node(t, ctx, name)
	if d := n.Annotations[protocol.DesiredDrainAnnotation]; d == protocol.DrainRequest(r1) || n.Spec.Unschedulable {
		t.Errorf("a refused update asked for a drain: %s unschedulable=%v", nodeSummary(n), n.Spec.Unschedulable)
	}
	if n.Annotations[protocol.CurrentConfigAnnotation] != r0 {
		t.Errorf("node moved on: %s", nodeSummary(n))
	}
	mustContain(t, root, registriesConf, oneMirror)
	if _, err := os.Lstat(filepath.Join(root, "/etc/extra.conf")); !os.IsNotExist(err) {
		t.Errorf("/etc/extra.conf was written (err=%v)", err)
	}

	// Withdrawn: the pool goes back to r0, which the node runs.
	mc := &mcfgv1.MachineConfig{ObjectMeta: metav1.ObjectMeta{Name: "50-" + pool + "-broken"}}
	if err := env.Client.Delete(ctx, mc); err != nil {
		t.Fatal(err)
	}
	awaitNode(t, ctx, name, "Done in "+r0+" again", doneIn(r0))
	if ag.reboots.Load() != 0 {
		t.Errorf("%d reboots", ag.reboots.Load())
	}
}

// TestIrreconcilableValidationOverridesReachTheAgent: a disk added after install is refused by
// the render controller; once MachineConfiguration cluster's irreconcilableValidationOverrides
// allows Disks, the pool renders it and the agent takes the new config without a drain or a
// reboot (the disk is left alone, as in OpenShift), as `mco plan` says.
func TestIrreconcilableValidationOverridesReachTheAgent(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const pool, name = "diskoverride", "diskoverride-0"
	r0 := customPool(t, ctx, pool, map[string]string{"/etc/base.conf": "base"})
	root := newRoot(t)
	provision(t, root, renderedConfig(t, ctx, r0))
	createReadyNode(t, ctx, name, map[string]string{"node-role.kubernetes.io/" + pool: ""})
	ag := startAgent(t, name, root)
	awaitNode(t, ctx, name, "Done in "+r0, doneIn(r0))
	before := renderedConfig(t, ctx, r0)

	create(t, ctx, &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "50-" + pool + "-disk", Labels: map[string]string{protocol.RoleLabel: pool}},
		Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(
			`{"ignition":{"version":"3.5.0"},"storage":{"disks":[{"device":"/dev/sdb","wipeTable":true}]}}`)}},
	})
	eventually(t, 30*time.Second, "pool "+pool+" RenderDegraded by the disk", func() (bool, string) {
		p := &mcfgv1.MachineConfigPool{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: pool}, p); err != nil {
			return false, err.Error()
		}
		c := poolcondition.Get(&p.Status, mcfgv1.MachineConfigPoolRenderDegraded)
		return c != nil && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, "storage.disks") && p.Spec.Configuration.Name == r0, p.Spec.Configuration.Name
	})

	// Unstructured: the typed object would send an empty nodeDisruptionPolicy, which the CRD refuses.
	mc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operator.openshift.io/v1", "kind": "MachineConfiguration",
		"metadata": map[string]any{"name": protocol.ClusterMachineConfiguration},
		"spec":     map[string]any{"managementState": "Managed", "irreconcilableValidationOverrides": map[string]any{"storage": []any{"Disks"}}},
	}}
	create(t, ctx, mc)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), mc) })
	r1 := awaitPoolTarget(t, ctx, pool, r0)
	if p := planned(t, ctx, pool, before, r1); p.Disruption != "none" {
		t.Errorf("mco plan: disruption %q (unreconcilable %q), want none", p.Disruption, p.Unreconcilable)
	}
	n := awaitNode(t, ctx, name, "Done in "+r1, doneIn(r1))
	if d := n.Annotations[protocol.DesiredDrainAnnotation]; d == protocol.DrainRequest(r1) {
		t.Errorf("drained for a disk left alone: %s", nodeSummary(n))
	}
	if ag.reboots.Load() != 0 {
		t.Errorf("%d reboots for a disk left alone", ag.reboots.Load())
	}
}
