package daemon

import (
	"context"
	"time"
)

// watchForceFile wakes the loop when the force file appears. Nothing else would: a node
// Degraded by drift or a refused update waits for a change of its Node, and an admin who
// touches /run/machine-config-daemon-force changes neither (issue 37: nothing happened in
// 60 s). A stat of one path every few seconds costs nothing; only the file's appearance
// wakes the loop, so a forced update that fails is retried on the loop's own backoff.
func (a *Agent) watchForceFile(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	present := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now, err := a.root.Exists(ForceFilePath)
		if err != nil {
			continue // asked again at the next tick
		}
		if now && !present {
			a.opts.Log.Info("found the force file; rewriting the desired config", "node", a.opts.NodeName, "file", ForceFilePath)
			a.poke()
		}
		present = now
	}
}
