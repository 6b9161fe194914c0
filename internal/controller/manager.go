// Package controller hosts mco's controllers in one controller-runtime manager: the process
// `mco controller` runs, leader-elected so two replicas never act at once.
package controller

import (
	"fmt"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	rendercontroller "github.com/mco-dev/mco/internal/controller/render"
	"github.com/mco-dev/mco/internal/scheme"
)

// Options configure the controller process.
type Options struct {
	MetricsAddr             string
	ProbeAddr               string
	LeaderElection          bool
	LeaderElectionNamespace string
	Render                  rendercontroller.Options
}

// NewManager builds the manager with every controller registered; Start runs them.
func NewManager(cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme.Scheme,
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:  opts.ProbeAddr,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        "mco-controller",
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
	})
	if err != nil {
		return nil, fmt.Errorf("creating controller manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	render := &rendercontroller.Reconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorderFor("mco-render-controller"),
		Options:  opts.Render,
	}
	if err := render.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("render controller: %w", err)
	}
	return mgr, nil
}
