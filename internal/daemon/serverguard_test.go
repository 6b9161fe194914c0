package daemon_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/nftables"
	"golang.org/x/sys/unix"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/daemon"
	"github.com/mco-dev/mco/internal/serverguard"
	"github.com/mco-dev/mco/internal/testenv"
)

// newNetns is a network namespace of the test's own, by file descriptor: the real nftables,
// none of the host's rules.
func newNetns(t *testing.T) int {
	t.Helper()
	type result struct {
		fd  int
		err error
	}
	ch := make(chan result)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- result{err: err}
			return
		}
		fd, err := unix.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		ch <- result{fd, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { unix.Close(r.fd) })
	return r.fd
}

// TestServerGuard: the agent writes its node's rules for the Node's pod CIDRs, puts them back
// when someone removes them, reports a node whose pod network it does not know, keeps the rules
// when it stops while mco stays installed, and removes them when it stops because its DaemonSet
// was deleted.
func TestServerGuard(t *testing.T) {
	testenv.Integration(t)
	requireSystemctl(t)
	ctx := context.Background()
	const pool, name, unknown = "server-guard", "server-guard-0", "server-guard-1"
	fw, err := serverguard.Open("mco-server-guard-test", nftables.WithNetNSFd(newNetns(t)))
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "server-guard-test"}}
	labels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "mco-daemon"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "x"}}}}}}
	for _, o := range []client.Object{ns, ds} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
	}
	guard := func(o *daemon.Options) {
		o.Guard = daemon.GuardOptions{Firewall: fw, Ports: []uint16{22623, 22624}, Namespace: ns.Name, DaemonSet: ds.Name, Interval: 200 * time.Millisecond}
	}

	r0 := customPool(t, ctx, pool, map[string]string{"/etc/base.conf": "base"})
	root := newRoot(t)
	provision(t, root, renderedConfig(t, ctx, r0))
	createReadyNode(t, ctx, name, map[string]string{"node-role.kubernetes.io/" + pool: ""})
	n := node(t, ctx, name)
	n.Spec.PodCIDRs, n.Spec.PodCIDR = []string{"10.250.3.0/24"}, "10.250.3.0/24"
	if err := env.Client.Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	nets, _ := serverguard.ParsePrefixes("10.250.3.0/24")
	spec, err := serverguard.Plan(name, nets, nil, []uint16{22623, 22624})
	if err != nil {
		t.Fatal(err)
	}
	installed := func() (bool, string) {
		have, present, err := fw.Installed(name)
		return err == nil && present && slices.Equal(have, spec.Tags()), fmt.Sprintf("%v %v %v", have, present, err)
	}
	gone := func() (bool, string) {
		have, present, err := fw.Installed(name)
		return err == nil && !present, fmt.Sprintf("%v %v %v", have, present, err)
	}

	ag := startAgentWith(t, name, root, guard, nil)
	eventually(t, 30*time.Second, "the node's chains for its pod CIDR", installed)
	if err := fw.Remove(name); err != nil { // an admin's `nft delete table ...`
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the chains put back", installed)

	// A node whose pod network nobody told the agent: reported, nothing pretended.
	createReadyNode(t, ctx, unknown, nil)
	startAgentWith(t, unknown, newRoot(t), guard, nil)
	ev := awaitEvent(t, ctx, unknown, daemon.ServerGuardFailed)
	if !strings.Contains(ev.Message, "no pod network is known") {
		t.Errorf("event %q does not say why", ev.Message)
	}
	if have, present, _ := fw.Installed(unknown); present {
		t.Errorf("a chain for a node without a pod network: %v", have)
	}

	// Stopped while mco stays (a rolling update): the rules stay.
	ag.stop()
	<-ag.done
	if ok, have := installed(); !ok {
		t.Fatalf("an agent stopping with its DaemonSet in place removed its node's rules: %s", have)
	}

	// Stopped because its DaemonSet is gone: the rules go.
	ag = startAgentWith(t, name, root, guard, nil)
	eventually(t, 30*time.Second, "the restarted agent's chains", installed)
	if err := env.Client.Delete(ctx, ds); err != nil {
		t.Fatal(err)
	}
	ag.stop()
	<-ag.done
	eventually(t, 5*time.Second, "the chains removed with the DaemonSet", gone)
}
