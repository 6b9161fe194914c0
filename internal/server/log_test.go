package server

import (
	"io"
	"log/slog"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// controller-runtime's informers and certificate watcher log through its global logger, which
// complains loudly when unset.
func init() { ctrllog.SetLogger(logr.Discard()) }
