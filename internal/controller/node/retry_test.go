package node

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// After a long outage (every reconcile failing), a pool is retried within maxRetryDelay of the
// API server's return, not after controller-runtime's default of up to 16 minutes.
func TestRetryDelayIsBounded(t *testing.T) {
	l := retryLimiter()
	pool := reconcile.Request{}
	pool.Name = "worker"
	first := l.When(pool)
	var last = first
	for range 20 { // 5 ms doubled 20 times is over 40 minutes, within the bucket's burst of 100
		last = l.When(pool)
	}
	if first <= 0 || first > maxRetryDelay/1000 {
		t.Errorf("first retry after %v, want a few milliseconds", first)
	}
	if last != maxRetryDelay {
		t.Errorf("retry after 20 failures waits %v, want %v", last, maxRetryDelay)
	}
	l.Forget(pool)
	if again := l.When(pool); again != first {
		t.Errorf("after a success the first retry waits %v, want %v", again, first)
	}
}
