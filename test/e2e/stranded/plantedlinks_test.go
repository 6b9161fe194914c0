package stranded

import (
	"context"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/test/clustertest"
)

// plantedLinks is issue 37 part 4 on real machines: a link planted on every worker in the way
// of a MachineConfig's file, one climbing out of the root to /tmp and one to /proc/self. The
// update is refused before any drain or write, naming the file and the link, on the node the
// controller picked (the pool halts on it); no node is drained or rebooted. Deleting the
// MachineConfig brings the pool back to Updated with every node Done, with no hand.
func plantedLinks(t *testing.T, ctx context.Context, cl *clustertest.Cluster) {
	for _, c := range []struct {
		name, link, target, file, reason string
	}{
		{name: "climbing out of the root", link: "/etc/mco-planted-x", target: "../../../../../../../../tmp", file: "/etc/mco-planted-x/f",
			reason: `file /etc/mco-planted-x/f: /etc/mco-planted-x is a symbolic link to "../../../../../../../../tmp", which leaves the host root`},
		{name: "into proc", link: "/etc/mco-planted-y", target: "/proc/self", file: "/etc/mco-planted-y/comm",
			reason: `file /etc/mco-planted-y/comm: /etc/mco-planted-y is a symbolic link to "/proc/self", which leads into /proc, a kernel file system the agent never writes to`},
	} {
		t.Run(c.name, func(t *testing.T) { plantedLink(t, ctx, cl, c.link, c.target, c.file, c.reason) })
	}
}

func plantedLink(t *testing.T, ctx context.Context, cl *clustertest.Cluster, link, target, file, reason string) {
	a := cl.Pool(t, ctx).Spec.Configuration.Name
	boots := cl.WorkerBoots(t, ctx)
	machines := int32(len(boots))
	for name := range boots {
		cl.InMachine(t, ctx, name, "ln", "-s", target, link) // as the reporter did, by hand
	}
	defer func() {
		for name := range boots {
			_, _ = cl.Output(context.Background(), name, "rm", "-f", link)
		}
	}()

	mc := clustertest.FileConfig("99-planted-link", file, "written through a planted link\n")
	if err := cl.C.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.IgnoreNotFound(cl.C.Delete(context.Background(), mc)) }()
	var b, refused string
	clustertest.Eventually(t, 2*time.Minute, "a worker refusing the config naming "+link, func() bool {
		p := cl.Pool(t, ctx)
		if b = p.Spec.Configuration.Name; b == a || !clustertest.HasSource(p, mc.Name) {
			return false
		}
		for name := range boots {
			ann := cl.Node(t, ctx, name).Annotations
			if ann[protocol.StateAnnotation] == string(protocol.NodeDegraded) &&
				strings.Contains(ann[protocol.ReasonAnnotation], "refusing "+b+", nothing was drained or written: "+reason) {
				refused = name
				return true
			}
		}
		return false
	})
	t.Logf("%s refused %s: %s", refused, b, cl.Node(t, ctx, refused).Annotations[protocol.ReasonAnnotation])
	// A wrong agent would drain now: give it the time, then look.
	clustertest.Sleep(ctx, 10*time.Second)
	for name := range boots {
		node := cl.Node(t, ctx, name)
		if node.Spec.Unschedulable || node.Annotations[protocol.DesiredDrainAnnotation] == protocol.DrainRequest(b) {
			t.Errorf("%s was drained for the refused %s: unschedulable=%v desiredDrain=%q", name, b,
				node.Spec.Unschedulable, node.Annotations[protocol.DesiredDrainAnnotation])
		}
		if got := node.Annotations[protocol.CurrentConfigAnnotation]; got != a {
			t.Errorf("%s moved to %s", name, got)
		}
	}

	start := time.Now()
	if err := cl.C.Delete(ctx, mc); err != nil {
		t.Fatal(err)
	}
	clustertest.Eventually(t, 2*time.Minute, "the pool Updated on "+a+" with every worker Done", func() bool {
		p := cl.Pool(t, ctx)
		if p.Spec.Configuration.Name != a || p.Status.Configuration.Name != a || p.Status.UpdatedMachineCount != machines {
			return false
		}
		for name := range boots {
			ann := cl.Node(t, ctx, name).Annotations
			if ann[protocol.StateAnnotation] != string(protocol.NodeDone) || ann[protocol.CurrentConfigAnnotation] != a {
				return false
			}
		}
		return true
	})
	t.Logf("%s: Done again %s after the MachineConfig was deleted", refused, time.Since(start).Round(time.Second))
	for name := range boots {
		if got := cl.Boots(t, name); got != boots[name] {
			t.Errorf("%s booted %d times", name, got-boots[name])
		}
		if got := cl.InMachine(t, ctx, name, "readlink", link); got != target {
			t.Errorf("%s: the planted link now points to %q", name, got)
		}
	}
	if strings.HasPrefix(target, "../") {
		for name := range boots {
			if _, err := cl.Output(ctx, name, "test", "!", "-e", "/tmp/f"); err != nil {
				t.Errorf("%s: /tmp/f was written through the link", name)
			}
		}
	}
}
