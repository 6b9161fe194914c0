package explain

import (
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/protocol"
)

// The fixtures are what a cluster holds at the moment the situation arises: the annotations
// the agent and the controllers write, the pool conditions the node controller sets, the
// events they emit (internal/daemon, internal/controller/{drain,node}).

const (
	oldConfig = "rendered-worker-old"
	newConfig = "rendered-worker-new"
)

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func workerPool(t testing.TB, target string) mcfgv1.MachineConfigPool {
	t.Helper()
	p, err := pools.Builtin(protocol.WorkerPool)
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.Configuration.Name = target
	p.Status.Configuration.Name = oldConfig
	return *p
}

// workerNode is a Ready worker running current, asked for desired, with more annotations.
func workerNode(name, current, desired string, more ...string) corev1.Node {
	a := map[string]string{protocol.CurrentConfigAnnotation: current, protocol.DesiredConfigAnnotation: desired, protocol.StateAnnotation: string(protocol.NodeDone)}
	for i := 0; i+1 < len(more); i += 2 {
		a[more[i]] = more[i+1]
	}
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: a, Labels: map[string]string{protocol.WorkerRoleLabel: ""}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour)),
		}}},
	}
}

func notReady(n corev1.Node, since time.Time) corev1.Node {
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", LastTransitionTime: metav1.NewTime(since)}}
	return n
}

func event(kind, name, typ, reason, msg string, ago time.Duration) corev1.Event {
	return corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name + "." + reason, Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name},
		Type:           typ, Reason: reason, Message: msg,
		FirstTimestamp: metav1.NewTime(now.Add(-ago)), LastTimestamp: metav1.NewTime(now.Add(-ago)), Count: 1,
	}
}

func condition(t mcfgv1.MachineConfigPoolConditionType, reason, msg string) mcfgv1.MachineConfigPoolCondition {
	return mcfgv1.MachineConfigPoolCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(now.Add(-5 * time.Minute))}
}

func policy(name string, spec rolloutv1.MachineConfigPoolRolloutSpec, entry rolloutv1.PoolRolloutStatus) rolloutv1.MachineConfigPoolRollout {
	if spec.PoolSelector == nil {
		spec.PoolSelector = &metav1.LabelSelector{MatchLabels: map[string]string{protocol.PoolLabelPrefix + protocol.WorkerPool: ""}}
	}
	p := rolloutv1.MachineConfigPoolRollout{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	if entry.Name != "" {
		p.Status.Pools = []rolloutv1.PoolRolloutStatus{entry}
		p.Status.Phase, p.Status.Reason = entry.Phase, entry.Reason
	}
	return p
}

// want is what an explanation must say: each field's text must contain every listed phrase.
type want struct {
	summary, doing, why, next, youCan, evidence []string
}

func (w want) check(t *testing.T, x Explanation) {
	t.Helper()
	for _, f := range []struct {
		field  string
		text   string
		phrase []string
	}{
		{"Summary", x.Summary, w.summary}, {"Doing", x.Doing, w.doing}, {"Why", strings.Join(x.Why, "\n"), w.why},
		{"Next", x.Next, w.next}, {"YouCan", strings.Join(x.YouCan, "\n"), w.youCan}, {"Evidence", strings.Join(x.Evidence, "\n"), w.evidence},
	} {
		for _, p := range f.phrase {
			if !strings.Contains(f.text, p) {
				t.Errorf("%s does not say %q:\n%s", f.field, p, f.text)
			}
		}
	}
	if t.Failed() {
		var b strings.Builder
		_ = Write(&b, x)
		t.Logf("explanation:\n%s", b.String())
	}
}
