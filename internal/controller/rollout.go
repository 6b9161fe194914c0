package controller

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	draincontroller "github.com/mco-dev/mco/internal/controller/drain"
	nodecontroller "github.com/mco-dev/mco/internal/controller/node"
	pacingcontroller "github.com/mco-dev/mco/internal/controller/pacing"
)

// setupRollout registers the controllers that move nodes between configs: the node controller
// (which nodes, pool status, pacing), the drain controller (cordon, evict, uncordon) and, where
// MachineConfigPoolRollouts are served, the pacing controller (each policy's Valid condition).
func setupRollout(mgr ctrl.Manager, nodeOpts nodecontroller.Options, drainOpts draincontroller.Options) error {
	node := &nodecontroller.Reconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorderFor("mco-node-controller"),
		Options:  nodeOpts,
	}
	if err := node.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("node controller: %w", err)
	}
	kube, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("drain controller client: %w", err)
	}
	drainOpts.Pacing = nodeOpts.Pacing
	drain := &draincontroller.Reconciler{
		Client:   mgr.GetClient(),
		Kube:     kube,
		Recorder: mgr.GetEventRecorderFor("mco-drain-controller"),
		Options:  drainOpts,
	}
	if err := drain.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("drain controller: %w", err)
	}
	if nodeOpts.Pacing {
		if err := (&pacingcontroller.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
			return fmt.Errorf("pacing controller: %w", err)
		}
	}
	return nil
}
