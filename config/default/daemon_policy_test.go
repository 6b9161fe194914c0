package install

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

// nodeNameClaim is the user extra the API server fills from a token's node claim
// (k8s.io/apiserver/pkg/authentication/serviceaccount.NodeNameKey).
const nodeNameClaim = "authentication.kubernetes.io/node-name"

// TestDaemonNodePolicy checks daemon-node-policy.yaml in the real API server with real agent
// tokens (TokenRequest, bound to a Node or to a Pod on a node, as the DaemonSet's projected token
// is): an agent changes its own Node's own annotations and nothing else, anywhere.
func TestDaemonNodePolicy(t *testing.T) {
	e := requireEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := kubernetes.NewForConfigOrDie(e.Config)

	const cfgA, cfgB = "rendered-worker-a", "rendered-worker-b"
	a := createManagedNode(ctx, t, admin, "policy-a", cfgA)
	b := createManagedNode(ctx, t, admin, "policy-b", cfgB)

	agentA := clientFor(t, e, token(ctx, t, admin, "mco-daemon", &authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: a.Name, UID: a.UID}))
	agentB := clientFor(t, e, token(ctx, t, admin, "mco-daemon", &authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: b.Name, UID: b.UID}))

	// The API server enforces a new policy once its informer has it; until then this no-op
	// patch (B already is Done) goes through.
	noop := annotationsPatch(map[string]*string{protocol.StateAnnotation: ptr.To("Done")})
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsForbidden(patch(ctx, agentA, b.Name, noop)), nil
	})
	if err != nil {
		t.Fatalf("the policy never refused agent %s a patch of node %s: %v", a.Name, b.Name, err)
	}

	t.Run("own node, owned annotations", func(t *testing.T) {
		// An update with a drain and a reboot, as the agent writes it (internal/daemon).
		steps := []map[string]*string{
			{protocol.StateAnnotation: ptr.To("Working")},
			{protocol.DesiredDrainAnnotation: ptr.To(protocol.DrainRequest(cfgB))},
			{protocol.PostConfigActionAnnotation: ptr.To(protocol.PostConfigActionRebooting)},
			{protocol.StateAnnotation: ptr.To("Degraded"), protocol.ReasonAnnotation: ptr.To("failed once")},
			{protocol.StateAnnotation: ptr.To("Working"), protocol.ReasonAnnotation: nil},
			{protocol.DesiredDrainAnnotation: ptr.To(protocol.UncordonRequest(cfgB))},
			{protocol.CurrentConfigAnnotation: ptr.To(cfgB), protocol.StateAnnotation: ptr.To("Done"), protocol.PostConfigActionAnnotation: nil},
			// A node waiting for adoption shows it, and clears it once adopted.
			{protocol.AdoptionAnnotation: ptr.To(protocol.AdoptionPending), protocol.AdoptionPlanAnnotation: ptr.To(`{"target":"x"}`)},
			{protocol.AdoptionAnnotation: nil, protocol.AdoptionPlanAnnotation: nil},
		}
		for _, s := range steps {
			if err := patch(ctx, agentA, a.Name, annotationsPatch(s)); err != nil {
				t.Fatalf("agent %s patching its own node with %s: %v", a.Name, annotationsPatch(s), err)
			}
		}
		got := getNode(ctx, t, admin, a.Name).Annotations
		want := map[string]string{protocol.CurrentConfigAnnotation: cfgB, protocol.StateAnnotation: "Done",
			protocol.DesiredDrainAnnotation: protocol.UncordonRequest(cfgB), protocol.DesiredConfigAnnotation: cfgA}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("node %s annotation %s = %q, want %q", a.Name, k, got[k], v)
			}
		}
		for _, k := range []string{protocol.ReasonAnnotation, protocol.PostConfigActionAnnotation} {
			if _, ok := got[k]; ok {
				t.Errorf("node %s still has %s", a.Name, k)
			}
		}
	})

	t.Run("another node", func(t *testing.T) {
		for _, c := range []struct {
			agent    *kubernetes.Clientset
			from, to string
		}{{agentA, a.Name, b.Name}, {agentB, b.Name, a.Name}} {
			expectRefused(ctx, t, admin, c.agent, c.to,
				annotationsPatch(map[string]*string{protocol.StateAnnotation: ptr.To("Working")}),
				fmt.Sprintf("mco-daemon of node %s may not change node %s", c.from, c.to))
		}
	})

	t.Run("own node, fields it does not own", func(t *testing.T) {
		ann := func(k string) string { return "metadata.annotations[" + k + "]" }
		for _, c := range []struct {
			patch   string
			refused []string
		}{
			{annotationsPatch(map[string]*string{protocol.DesiredConfigAnnotation: ptr.To("rendered-worker-evil")}), []string{ann(protocol.DesiredConfigAnnotation)}},
			{annotationsPatch(map[string]*string{protocol.DesiredConfigAnnotation: nil}), []string{ann(protocol.DesiredConfigAnnotation)}},
			{annotationsPatch(map[string]*string{protocol.FirstPivotConfigAnnotation: ptr.To("rendered-worker-evil")}), []string{ann(protocol.FirstPivotConfigAnnotation)}},
			// An agent cannot approve its own adoption, nor choose what it is offered.
			{annotationsPatch(map[string]*string{protocol.AdoptAnnotation: ptr.To(protocol.AdoptApproved)}), []string{ann(protocol.AdoptAnnotation)}},
			{annotationsPatch(map[string]*string{protocol.AdoptionTargetAnnotation: ptr.To("rendered-worker-evil")}), []string{ann(protocol.AdoptionTargetAnnotation)}},
			// Nor release its own hold, or put itself first.
			{annotationsPatch(map[string]*string{rolloutv1.HoldAnnotation: ptr.To("false")}), []string{ann(rolloutv1.HoldAnnotation)}},
			{annotationsPatch(map[string]*string{rolloutv1.UpdatePriorityAnnotation: ptr.To("1000")}), []string{ann(rolloutv1.UpdatePriorityAnnotation)}},
			{annotationsPatch(map[string]*string{protocol.LastAppliedDrainAnnotation: ptr.To(protocol.DrainRequest(cfgB))}), []string{ann(protocol.LastAppliedDrainAnnotation)}},
			{annotationsPatch(map[string]*string{protocol.DrainBlockedAnnotation: nil, "example.com/other": ptr.To("x")}),
				[]string{ann(protocol.DrainBlockedAnnotation), ann("example.com/other")}},
			// Owned and not owned together: refused whole, naming only what is not owned.
			{annotationsPatch(map[string]*string{protocol.StateAnnotation: ptr.To("Working"), "example.com/other": ptr.To("x")}),
				[]string{"refused: " + ann("example.com/other")}},
			{`{"metadata":{"labels":{"node-role.kubernetes.io/master":""}}}`, []string{"metadata.labels[node-role.kubernetes.io/master]"}},
			{`{"metadata":{"labels":{"node-role.kubernetes.io/worker":null}}}`, []string{"metadata.labels[node-role.kubernetes.io/worker]"}},
			{`{"spec":{"unschedulable":true}}`, []string{"refused: spec.unschedulable"}},
			{`{"spec":{"taints":[{"key":"UpdateInProgress","effect":"PreferNoSchedule"}]}}`, []string{"refused: spec.taints"}},
			{`{"spec":{"providerID":"aws:///evil"}}`, []string{"refused: spec.providerID"}},
			{`{"metadata":{"finalizers":["example.com/keep"]}}`, []string{"refused: metadata.finalizers"}},
			{fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":%q,"uid":%q}]}}`, b.Name, b.UID),
				[]string{"refused: metadata.ownerReferences"}},
		} {
			err := expectRefused(ctx, t, admin, agentA, a.Name, c.patch,
				append([]string{"mco-daemon may change only the annotations it owns on node " + a.Name}, c.refused...)...)
			if err != nil && strings.Contains(err.Error(), ann(protocol.StateAnnotation)) {
				t.Errorf("patch %s: the message names the owned state annotation: %v", c.patch, err)
			}
		}
	})

	t.Run("first start seeds desiredConfig", func(t *testing.T) {
		// A new node has no currentConfig; the agent seeds it from node-annotations.json
		// (startup.go). Once it has one, desiredConfig is the node controller's.
		fresh := createNode(ctx, t, admin, "policy-fresh", nil)
		agent := clientFor(t, e, token(ctx, t, admin, "mco-daemon", &authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: fresh.Name, UID: fresh.UID}))
		seed := map[string]*string{protocol.CurrentConfigAnnotation: ptr.To(cfgA), protocol.DesiredConfigAnnotation: ptr.To(cfgA),
			protocol.FirstPivotConfigAnnotation: ptr.To(cfgA), protocol.StateAnnotation: ptr.To("Working")}
		if err := patch(ctx, agent, fresh.Name, annotationsPatch(seed)); err != nil {
			t.Fatalf("seeding new node %s: %v", fresh.Name, err)
		}
		expectRefused(ctx, t, admin, agent, fresh.Name,
			annotationsPatch(map[string]*string{protocol.DesiredConfigAnnotation: ptr.To(cfgB)}),
			"metadata.annotations["+protocol.DesiredConfigAnnotation+"]")
	})

	t.Run("a node with a config never looks new again", func(t *testing.T) {
		// Removing currentConfig would make node A look new, and a second patch could then
		// choose its desiredConfig: the first is refused, so the second stays refused.
		dropped := func(k string) string {
			return "mco-daemon may not remove metadata.annotations[" + k + "] from node " + a.Name
		}
		for _, c := range []struct {
			patch string
			want  string
		}{
			{annotationsPatch(map[string]*string{protocol.CurrentConfigAnnotation: nil}), dropped(protocol.CurrentConfigAnnotation)},
			{annotationsPatch(map[string]*string{protocol.CurrentConfigAnnotation: ptr.To("")}), dropped(protocol.CurrentConfigAnnotation)},
			{annotationsPatch(map[string]*string{protocol.CurrentConfigAnnotation: nil, protocol.StateAnnotation: ptr.To("Done")}), dropped(protocol.CurrentConfigAnnotation)},
			{annotationsPatch(map[string]*string{protocol.CurrentConfigAnnotation: nil, protocol.DesiredConfigAnnotation: ptr.To("rendered-worker-evil")}),
				"metadata.annotations[" + protocol.DesiredConfigAnnotation + "]"},
		} {
			expectRefused(ctx, t, admin, agentA, a.Name, c.patch, c.want)
		}
		if got := getNode(ctx, t, admin, a.Name).Annotations[protocol.CurrentConfigAnnotation]; got == "" {
			t.Fatalf("node %s lost its currentConfig", a.Name)
		}
		expectRefused(ctx, t, admin, agentA, a.Name,
			annotationsPatch(map[string]*string{protocol.DesiredConfigAnnotation: ptr.To("rendered-worker-evil")}),
			"metadata.annotations["+protocol.DesiredConfigAnnotation+"]")

		// A new node the node controller already targeted: its agent may seed it (the same
		// config, or its own first-boot one), never take the target away.
		targeted := createNode(ctx, t, admin, "policy-targeted", map[string]string{protocol.DesiredConfigAnnotation: cfgA})
		agent := clientFor(t, e, token(ctx, t, admin, "mco-daemon", &authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: targeted.Name, UID: targeted.UID}))
		expectRefused(ctx, t, admin, agent, targeted.Name, annotationsPatch(map[string]*string{protocol.DesiredConfigAnnotation: nil}),
			"mco-daemon may not remove metadata.annotations["+protocol.DesiredConfigAnnotation+"] from node "+targeted.Name)
		seed := map[string]*string{protocol.CurrentConfigAnnotation: ptr.To(cfgA), protocol.DesiredConfigAnnotation: ptr.To(cfgA),
			protocol.FirstPivotConfigAnnotation: ptr.To(cfgA), protocol.StateAnnotation: ptr.To("Working")}
		if err := patch(ctx, agent, targeted.Name, annotationsPatch(seed)); err != nil {
			t.Fatalf("seeding new node %s: %v", targeted.Name, err)
		}
	})

	t.Run("token bound to the agent's pod", func(t *testing.T) {
		// The DaemonSet's projected token is bound to its Pod; the API server adds the Pod's
		// node to the claims when it issues the token.
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: mcoNS, Name: "mco-daemon-policy-test"},
			Spec: corev1.PodSpec{NodeName: a.Name, ServiceAccountName: "mco-daemon",
				Containers: []corev1.Container{{Name: "daemon", Image: image + ":test"}}}}
		pod, err := admin.CoreV1().Pods(mcoNS).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = admin.CoreV1().Pods(mcoNS).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		})
		agent := clientFor(t, e, token(ctx, t, admin, "mco-daemon", &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}))
		if err := patch(ctx, agent, a.Name, annotationsPatch(map[string]*string{protocol.StateAnnotation: ptr.To("Working")})); err != nil {
			t.Fatalf("agent pod on %s patching its node: %v", a.Name, err)
		}
		// The two patches that would let a compromised agent choose its node's config.
		expectRefused(ctx, t, admin, agent, a.Name, annotationsPatch(map[string]*string{protocol.CurrentConfigAnnotation: nil}),
			"mco-daemon may not remove metadata.annotations["+protocol.CurrentConfigAnnotation+"] from node "+a.Name)
		expectRefused(ctx, t, admin, agent, a.Name, annotationsPatch(map[string]*string{protocol.DesiredConfigAnnotation: ptr.To("rendered-worker-evil")}),
			"metadata.annotations["+protocol.DesiredConfigAnnotation+"]")
		expectRefused(ctx, t, admin, agent, b.Name,
			annotationsPatch(map[string]*string{protocol.StateAnnotation: ptr.To("Working")}),
			fmt.Sprintf("mco-daemon of node %s may not change node %s", a.Name, b.Name))
	})

	t.Run("token without a node", func(t *testing.T) {
		unbound := clientFor(t, e, token(ctx, t, admin, "mco-daemon", nil))
		expectRefused(ctx, t, admin, unbound, a.Name,
			annotationsPatch(map[string]*string{protocol.StateAnnotation: ptr.To("Working")}),
			"only with a service account token bound to its node", nodeNameClaim, "update of node "+a.Name+" is refused")
		// Reads are not the policy's business.
		if _, err := unbound.CoreV1().Nodes().List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + a.Name}); err != nil {
			t.Errorf("an agent token without a node cannot list its node: %v", err)
		}
	})

	t.Run("controller unaffected", func(t *testing.T) {
		ctrl := clientFor(t, e, token(ctx, t, admin, "mco-controller", nil))
		for _, p := range []string{
			annotationsPatch(map[string]*string{protocol.DesiredConfigAnnotation: ptr.To(cfgB)}),
			`{"spec":{"unschedulable":true}}`,
			`{"metadata":{"labels":{"example.com/x":"y"}}}`,
		} {
			if err := patch(ctx, ctrl, b.Name, p); err != nil {
				t.Errorf("controller patching node %s with %s: %v", b.Name, p, err)
			}
		}
	})
}

// createManagedNode creates a worker Node that is in config (current = desired = config, Done).
func createManagedNode(ctx context.Context, t *testing.T, admin kubernetes.Interface, name, config string) *corev1.Node {
	t.Helper()
	return createNode(ctx, t, admin, name, map[string]string{protocol.CurrentConfigAnnotation: config,
		protocol.DesiredConfigAnnotation: config, protocol.StateAnnotation: "Done",
		protocol.DrainBlockedAnnotation: "pods: none"})
}

func createNode(ctx context.Context, t *testing.T, admin kubernetes.Interface, name string, annotations map[string]string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations,
		Labels: map[string]string{"node-role.kubernetes.io/worker": ""}}}
	n, err := admin.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return n
}

func getNode(ctx context.Context, t *testing.T, admin kubernetes.Interface, name string) *corev1.Node {
	t.Helper()
	n, err := admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// token issues a token for a ServiceAccount of mco's namespace through the TokenRequest API,
// bound to ref (nil: bound to nothing).
func token(ctx context.Context, t *testing.T, admin kubernetes.Interface, sa string, ref *authenticationv1.BoundObjectReference) string {
	t.Helper()
	tr, err := admin.CoreV1().ServiceAccounts(mcoNS).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: ref, ExpirationSeconds: ptr.To[int64](600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s bound to %v: %v", sa, ref, err)
	}
	return tr.Status.Token
}

// clientFor is a client of the test API server authenticated by token alone.
func clientFor(t *testing.T, e *testenv.Env, token string) *kubernetes.Clientset {
	t.Helper()
	cfg := rest.AnonymousClientConfig(e.Config)
	cfg.BearerToken = token
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// annotationsPatch is a merge patch of annotations as the agent sends it (kube.go
// patchAnnotations): nil deletes one.
func annotationsPatch(set map[string]*string) string {
	var parts []string
	for k, v := range set {
		if v == nil {
			parts = append(parts, fmt.Sprintf("%q:null", k))
		} else {
			parts = append(parts, fmt.Sprintf("%q:%q", k, *v))
		}
	}
	return `{"metadata":{"annotations":{` + strings.Join(parts, ",") + `}}}`
}

func patch(ctx context.Context, cs kubernetes.Interface, node, body string) error {
	_, err := cs.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(body), metav1.PatchOptions{})
	return err
}

// expectRefused sends body as a merge patch of node and wants it refused (403) with a message
// containing every one of want, and the Node left as it was. It returns the error.
func expectRefused(ctx context.Context, t *testing.T, admin, cs kubernetes.Interface, node, body string, want ...string) error {
	t.Helper()
	before := getNode(ctx, t, admin, node).ResourceVersion
	err := patch(ctx, cs, node, body)
	if !apierrors.IsForbidden(err) {
		t.Errorf("patch %s of node %s: got %v, want 403 Forbidden", body, node, err)
		return err
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("patch %s of node %s refused with %q, which does not say %q", body, node, err, w)
		}
	}
	if after := getNode(ctx, t, admin, node).ResourceVersion; after != before {
		t.Errorf("refused patch %s changed node %s (resourceVersion %s -> %s)", body, node, before, after)
	}
	t.Logf("refused: %v", err)
	return err
}
