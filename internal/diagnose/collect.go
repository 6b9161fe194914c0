package diagnose

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/explain"
	"github.com/mco-dev/mco/internal/protocol"
)

// LogSource fetches the logs Collect cannot read through the API objects: where they live
// depends on how mco runs (a dev cluster's files and machines, or a cluster's pods). A part it
// cannot fetch it records with Bundle.Fail and goes on.
type LogSource interface {
	// String says where the logs come from, for the summary.
	String() string
	// ComponentLogs adds the controller's and server's logs under logs/.
	ComponentLogs(ctx context.Context, b *Bundle, since time.Duration)
	// AgentLogs adds each node's agent log as nodes/<node>/agent.log.
	AgentLogs(ctx context.Context, b *Bundle, nodes []string, since time.Duration)
}

// Options says what Collect reads from.
type Options struct {
	// Client reads the API objects; its scheme must know mco's types (scheme.Scheme).
	Client client.Client
	// Discovery gives the Kubernetes version; nil leaves it out.
	Discovery discovery.ServerVersionInterface
	// Logs fetches logs and journals; nil collects none and says so in errors.txt.
	Logs LogSource
	// Since is how far back logs, journals and events go.
	Since time.Duration
	Now   time.Time
	// CLIVersion is this binary's version, for the summary.
	CLIVersion string
}

// The bundle's directories of API objects, one YAML file per object.
const (
	PoolsDir          = "cluster/machineconfigpools"
	NodesDir          = "cluster/nodes"
	MachineConfigsDir = "cluster/machineconfigs"
	EventsFile        = "cluster/events.yaml"
	EventsTableFile   = "cluster/events.txt"
	SummaryFile       = "summary.txt"
)

// Collect reads everything the bundle holds. It never fails as a whole: whatever cannot be
// read is in the bundle's Failures (errors.txt).
func Collect(ctx context.Context, o Options) *Bundle {
	b := &Bundle{}
	var (
		pools    mcfgv1.MachineConfigPoolList
		nodes    corev1.NodeList
		mcs      mcfgv1.MachineConfigList
		rollouts rolloutv1.MachineConfigPoolRolloutList
		mcns     mcfgv1.MachineConfigNodeList
	)
	poolsOK := collectList(ctx, o.Client, b, PoolsDir, &pools)
	nodesOK := collectList(ctx, o.Client, b, NodesDir, &nodes)
	collectList(ctx, o.Client, b, "cluster/machineconfignodes", &mcns)
	collectList(ctx, o.Client, b, "cluster/machineconfigurations", &operatorv1.MachineConfigurationList{})
	collectList(ctx, o.Client, b, "cluster/kubeletconfigs", &mcfgv1.KubeletConfigList{})
	collectList(ctx, o.Client, b, "cluster/containerruntimeconfigs", &mcfgv1.ContainerRuntimeConfigList{})
	collectList(ctx, o.Client, b, "cluster/machineconfigpoolrollouts", &rollouts)
	redactions := collectMachineConfigs(ctx, o.Client, b, &mcs)
	events := collectEvents(ctx, o.Client, b, o.Now.Add(-o.Since))

	nodeNames := make([]string, len(nodes.Items))
	for i, n := range nodes.Items {
		nodeNames[i] = n.Name
	}
	logSource := "nowhere (no log source)"
	if o.Logs != nil {
		logSource = o.Logs.String()
		o.Logs.ComponentLogs(ctx, b, o.Since)
		o.Logs.AgentLogs(ctx, b, nodeNames, o.Since)
	} else {
		b.Fail("logs and journals", fmt.Errorf("no log source"))
	}

	versions := []string{"mco (this CLI): " + o.CLIVersion}
	if o.Discovery != nil {
		if v, err := o.Discovery.ServerVersion(); err != nil {
			b.Fail("Kubernetes version", err)
		} else {
			versions = append(versions, "Kubernetes: "+v.GitVersion)
		}
	}
	versions = append(versions, "mco controller (from the rendered configs it generated): "+controllerVersions(mcs.Items))
	explanations := Explanations(explain.Cluster{
		Now: o.Now, Pools: pools.Items, Nodes: nodes.Items, MachineConfigNodes: mcns.Items, Events: events, Policies: rollouts.Items,
	})
	for _, x := range explanations {
		var text strings.Builder
		if err := explain.Write(&text, x); err != nil {
			b.Fail(ExplanationFile(x), err)
			continue
		}
		b.Add(ExplanationFile(x), []byte(text.String()))
	}
	b.Add(SummaryFile, []byte(Summary(SummaryInput{
		Collected: o.Now, Since: o.Since, Versions: versions, LogSource: logSource,
		Pools: pools.Items, Nodes: nodes.Items, Rollouts: rollouts.Items,
		Failures: len(b.failures), Redactions: redactions,
		PoolsCollected: poolsOK, NodesCollected: nodesOK, Explanations: explanations,
	})))
	return b
}

// collectList lists every object of list's kind into dir, one file per object.
func collectList(ctx context.Context, c client.Client, b *Bundle, dir string, list client.ObjectList) bool {
	if err := c.List(ctx, list); err != nil {
		b.Fail(dir, err)
		return false
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		b.Fail(dir, err)
		return false
	}
	for _, item := range items {
		obj, ok := item.(client.Object)
		if !ok {
			continue
		}
		stripNoise(obj)
		b.AddYAML(objectFile(dir, obj), withKind(c.Scheme(), obj))
	}
	return true
}

func collectMachineConfigs(ctx context.Context, c client.Client, b *Bundle, mcs *mcfgv1.MachineConfigList) int {
	var lines []string
	if err := c.List(ctx, mcs); err != nil {
		b.Fail(MachineConfigsDir, err)
	}
	for i := range mcs.Items {
		mc := &mcs.Items[i]
		redacted, done, err := RedactMachineConfig(mc)
		if err != nil {
			b.Fail(MachineConfigsDir+"/"+mc.Name+" (written without spec.config)", err)
		}
		for _, r := range done {
			lines = append(lines, r.String())
		}
		b.AddYAML(objectFile(MachineConfigsDir, redacted), withKind(c.Scheme(), redacted))
	}
	text := "none: no MachineConfig has a file at a secret-looking path or a password hash\n"
	if len(lines) > 0 {
		text = strings.Join(lines, "\n") + "\n"
	}
	b.Add(RedactionsFile, []byte(text))
	return len(lines)
}

// collectEvents adds the relevant events (RelevantEvent) and returns all, for explanations.
func collectEvents(ctx context.Context, c client.Client, b *Bundle, since time.Time) []corev1.Event {
	var events corev1.EventList
	if err := c.List(ctx, &events); err != nil {
		b.Fail("events", err)
		return nil
	}
	relevant := &corev1.EventList{}
	for i := range events.Items {
		if RelevantEvent(&events.Items[i], since) {
			ev := events.Items[i]
			stripNoise(&ev)
			relevant.Items = append(relevant.Items, ev)
		}
	}
	relevant.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("EventList"))
	for i := range relevant.Items {
		relevant.Items[i].SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Event"))
	}
	b.AddYAML(EventsFile, relevant)
	b.Add(EventsTableFile, []byte(EventsTable(relevant.Items)))
	return events.Items
}

// objectFile is dir/<name>.yaml, or dir/<namespace>/<name>.yaml for a namespaced object.
func objectFile(dir string, obj client.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return dir + "/" + ns + "/" + obj.GetName() + ".yaml"
	}
	return dir + "/" + obj.GetName() + ".yaml"
}

// withKind sets obj's apiVersion and kind, which typed lists leave empty, so each file reads
// as the manifest it is.
func withKind(s *runtime.Scheme, obj client.Object) client.Object {
	if gvk, err := apiutil.GVKForObject(obj, s); err == nil {
		obj.GetObjectKind().SetGroupVersionKind(gvk)
	}
	return obj
}

// controllerVersions are the distinct controller versions that generated MachineConfigs.
func controllerVersions(mcs []mcfgv1.MachineConfig) string {
	var vs []string
	for _, mc := range mcs {
		if v := mc.Annotations[protocol.GeneratedByControllerVersionAnnotation]; v != "" && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return "unknown (no generated MachineConfig)"
	}
	slices.Sort(vs)
	return strings.Join(vs, ", ")
}
