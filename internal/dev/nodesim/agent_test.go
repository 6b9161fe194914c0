package nodesim

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/machineconfignode"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithManager(m, "nodesim agent", func(e *testenv.Env, mgr ctrl.Manager) error {
		env = e
		return (&Agent{Client: mgr.GetClient(), Report: true}).SetupWithManager(mgr, "nodesim-test")
	}))
}

// With Report, a rebootless update is written as the real agent writes it (internal/daemon
// TestMachineConfigNodeReport): Working, then currentConfig and Done on the Node; the
// MachineConfigNode's status once prepared and once Done; the Updated event.
func TestReportLikeTheAgent(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const name = "report-0"
	n, err := CreateNode(ctx, env.Client, name, "rendered-a", nil)
	if err != nil {
		t.Fatal(err)
	}
	mcn, err := machineconfignode.For(n, protocol.WorkerPool)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, mcn); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var states []string
	var mcnWrites int
	testenv.WatchNamed(t, ctx, env.Config, scheme.Scheme, &corev1.NodeList{}, name, func(o client.Object) {
		mu.Lock()
		defer mu.Unlock()
		if s := o.GetAnnotations()[protocol.StateAnnotation]; len(states) == 0 || states[len(states)-1] != s {
			states = append(states, s)
		}
	})
	testenv.WatchNamed(t, ctx, env.Config, scheme.Scheme, &mcfgv1.MachineConfigNodeList{}, name, func(client.Object) {
		mu.Lock()
		defer mu.Unlock()
		mcnWrites++
	})

	patch := client.MergeFrom(n.DeepCopy())
	n.Annotations[protocol.DesiredConfigAnnotation] = "rendered-b"
	if err := env.Client.Patch(ctx, n, patch); err != nil {
		t.Fatal(err)
	}
	var got mcfgv1.MachineConfigNode
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &got); err != nil {
			return false, nil
		}
		return got.Status.ConfigVersion != nil && got.Status.ConfigVersion.Current == "rendered-b" &&
			meta.IsStatusConditionTrue(got.Status.Conditions, string(mcfgv1.MachineConfigNodeUpdateComplete)), nil
	})
	if err != nil {
		t.Fatalf("MachineConfigNode status never reached rendered-b, UpdateComplete: %v; %+v", err, got.Status)
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, string(mcfgv1.MachineConfigNodeUpdatePrepared)) {
		t.Errorf("UpdatePrepared not True: the prepared step was not written")
	}
	var events corev1.EventList
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.List(ctx, &events); err != nil {
			return false, nil
		}
		return slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.InvolvedObject.Name == name && e.Reason == ReasonUpdated
		}), nil
	})
	if err != nil {
		t.Errorf("no %s event on node %s", ReasonUpdated, name)
	}
	// The watches may deliver the last writes after the event: wait for the Node back at Done
	// and the MachineConfigNode's status write (however loaded the machine, each watch on its
	// own), then a moment more for a write that should not come.
	_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return len(states) >= 3 && states[len(states)-1] == string(protocol.NodeDone) && mcnWrites >= 2, nil
	})
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if want := []string{string(protocol.NodeDone), string(protocol.NodeWorking), string(protocol.NodeDone)}; !slices.Equal(states, want) {
		t.Errorf("node states %q, want %q", states, want)
	}
	// The created object, then one status write when Done, carrying the prepared step: an
	// update without a drain has nothing to wait for in between (as the real agent's).
	if mcnWrites != 2 {
		t.Errorf("MachineConfigNode versions seen: %d, want 2 (created, done)", mcnWrites)
	}
}
