package server

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Source fills store and keeps it current until ctx ends (RunCluster, RunBootstrap,
// RunFromDir bound to their options).
type Source func(ctx context.Context, store *Store) error

// Options configure a whole server process.
type Options struct {
	Listen ListenOptions
	// TokenOverlap is how long a rotated-out token without an explicit expiry keeps working.
	TokenOverlap time.Duration
	// RateLimit bounds /config/ requests per client address (zero PerSecond: unlimited).
	RateLimit RateLimit
	// AllowUnauthenticated serves pools that have no token configured to anyone (their
	// configs embed the bootstrap kubeconfig); off, such pools are refused with 403.
	AllowUnauthenticated bool
	Log                  *slog.Logger
}

// Run binds the listeners, then serves while source keeps the pools current, until ctx ends
// or either fails.
func Run(ctx context.Context, source Source, opts Options) error {
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	opts.Listen.Gatherer = reg
	listeners, err := Listen(opts.Listen)
	if err != nil {
		return err
	}
	if opts.AllowUnauthenticated {
		log.Warn("--allow-unauthenticated: pools without a token are served, with the bootstrap kubeconfig their configs embed, to anyone who can reach the port")
	}
	store := NewStore(opts.TokenOverlap)
	metrics := NewMetrics(reg)
	handler := limitConfigRequests(NewHandler(store, metrics, log).withUnauthenticated(opts.AllowUnauthenticated), opts.RateLimit, metrics, log)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sourceErr := make(chan error, 1)
	go func() {
		err := source(ctx, store)
		cancel()
		sourceErr <- err
	}()
	serveErr := listeners.Serve(ctx, handler, log)
	return errors.Join(<-sourceErr, serveErr)
}
