package testenv

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WatchNamed passes record every version of the object called name (of list's kind) that a
// watch of its own sees, from its current one on, independent of every controller's cache: a
// test asserting "never" looks at every version, not at the last one it happened to Get. The
// watch stops when the test ends; record runs on the watch's goroutine.
func WatchNamed(t testing.TB, ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, list client.ObjectList, name string, record func(client.Object)) {
	t.Helper()
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, list, client.MatchingFields{"metadata.name": name})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if obj, ok := ev.Object.(client.Object); ok && ev.Type != watch.Error {
				record(obj)
			}
		}
	}()
	t.Cleanup(func() { w.Stop(); <-done })
}
