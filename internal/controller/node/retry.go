package node

import (
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// maxRetryDelay bounds how long a pool waits to be reconciled again after failed reconciles.
// controller-runtime's default doubles the delay up to about 16 minutes. While the API server
// or etcd is down every reconcile fails, so the delay grows; once they are back, a pool whose
// nodes are all Done gets no further Node event to wake it, and its status (counts, Updated)
// would stay stale for minutes although every node arrived.
const maxRetryDelay = 30 * time.Second

// retryLimiter is controller-runtime's default limiter with the per-item backoff capped at
// maxRetryDelay: the same 5 ms first retry, doubling, and the same overall bucket.
func retryLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, maxRetryDelay),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}
